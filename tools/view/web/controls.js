// What a person can do on the page: pick the view (buttons or keys 1-5),
// steer the PTZ camera (buttons, arrow keys, +/-), follow the next robot
// (n) or the one before (N) (or pick it in the robot list, robot_list.js),
// hide the trail (t) or the overlay (h). The address bar follows the
// view and camera settings so the layout can be bookmarked. None of this
// reaches the robot; PTZ steps reach kenaf-cameras when it shares the
// camera (ptz_share.js).
const STEP_DEG = 5;
const ZOOM_STEP = 1.25;

function setUrl(views) {
    const q = new URLSearchParams(location.search);
    q.set('view', views.name);
    if (views.name === 'ptz') {
        q.set('pan', views.ptz.pan.toFixed(0));
        q.set('tilt', views.ptz.tilt.toFixed(0));
        q.set('zoom', views.ptz.zoom.toFixed(2));
    }
    history.replaceState(null, '', '?' + q.toString());
}

export function bindControls(c) {
    const { views, overlay, VIEWS, ptzShare } = c;
    const show = () => {
        for (const v of VIEWS)
            document.getElementById('v-' + v).classList.toggle('sel', views.name === v);
        setUrl(views);
    };
    const ptz = (dp, dt, z) => {
        views.movePtz(dp, dt, z);
        if (ptzShare && ptzShare.active)
            ptzShare.send();
        setUrl(views);
    };
    for (const v of VIEWS)
        document.getElementById('v-' + v).addEventListener('click', () => {
            views.setView(v);
            show();
        });
    const buttons = {
        'pan-left': () => ptz(STEP_DEG, 0, 1), 'pan-right': () => ptz(-STEP_DEG, 0, 1),
        'tilt-up': () => ptz(0, STEP_DEG, 1), 'tilt-down': () => ptz(0, -STEP_DEG, 1),
        'zoom-in': () => ptz(0, 0, ZOOM_STEP), 'zoom-out': () => ptz(0, 0, 1 / ZOOM_STEP),
        'ptz-home': () => ptz(-views.ptz.pan, -views.ptz.tilt, 1 / views.ptz.zoom),
    };
    for (const [id, fn] of Object.entries(buttons))
        document.getElementById(id).addEventListener('click', fn);
    window.addEventListener('keydown', e => {
        if (e.ctrlKey || e.altKey || e.metaKey)
            return;
        const n = Number(e.key);
        if (n >= 1 && n <= VIEWS.length) {
            views.setView(VIEWS[n - 1]);
            show();
        } else if (views.name === 'ptz' && e.key === 'ArrowLeft') buttons['pan-left']();
        else if (views.name === 'ptz' && e.key === 'ArrowRight') buttons['pan-right']();
        else if (views.name === 'ptz' && e.key === 'ArrowUp') buttons['tilt-up']();
        else if (views.name === 'ptz' && e.key === 'ArrowDown') buttons['tilt-down']();
        else if (e.key === '+' || e.key === '=') buttons['zoom-in']();
        else if (e.key === '-') buttons['zoom-out']();
        else if (e.key === 'n') c.nextRobot(1);
        else if (e.key === 'N') c.nextRobot(-1);
        else if (e.key === 't') c.toggleTrail();
        else if (e.key === 'h') overlay.toggle();
        else
            return;
        e.preventDefault();
    });
    show();
}
