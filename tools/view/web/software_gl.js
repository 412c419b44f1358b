// Whether WebGL here is drawn by the CPU (SwiftShader, llvmpipe: no GPU),
// asked of a throw-away context before the page makes its own. There the
// smoothed edges (multisampling) cost a third of a frame's time, so the page
// goes without them unless ?aa=1 asks (params.js, main.js).
const SOFTWARE = /swiftshader|llvmpipe|softpipe|software|microsoft basic render/i;

// The renderer's name as WebGL gives it ('' without WebGL).
export function glRendererName() {
    const c = document.createElement('canvas');
    const gl = c.getContext('webgl');
    if (!gl)
        return '';
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER) || '');
    const lose = gl.getExtension('WEBGL_lose_context');
    if (lose)
        lose.loseContext(); // one context fewer held until garbage collection
    return name;
}

export function isSoftwareGl(name) {
    return SOFTWARE.test(name);
}
