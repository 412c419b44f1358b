// The resolution the scene is drawn at, as a fraction of the window's: a
// machine without a GPU (software WebGL) cannot fill a large window at the
// display's rate, so below 30 frames/s for a second the picture is drawn at
// 80 % of the resolution (down to half) and scaled up, and above 50 frames/s
// at 125 % again (up to full). ?scale=F fixes the fraction instead.
const LOW_FPS = 30, HIGH_FPS = 50, MIN = 0.5, SETTLE_MS = 2000;

export class RenderScale {
    constructor(fixed) {
        this.fixed = fixed > 0;
        this.value = this.fixed ? fixed : 1;
        this.next = performance.now() + SETTLE_MS; // the first frames compile shaders
    }

    // Called every frame with the frame rate of the last second; true when
    // the fraction changed.
    update(now, fps) {
        if (this.fixed || now < this.next)
            return false;
        this.next = now + 1000;
        let v = this.value;
        if (fps < LOW_FPS)
            v = Math.max(MIN, v * 0.8);
        else if (fps > HIGH_FPS)
            v = Math.min(1, v * 1.25);
        if (Math.abs(v - this.value) < 1e-3)
            return false;
        this.value = v;
        // a new size costs a frame or two: judge it after a full second
        this.next = now + 1000;
        return true;
    }
}
