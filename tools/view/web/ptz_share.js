// The front PTZ camera shared with kenaf-cameras (kenaf-view --cameras URL,
// docs/view.md): when the server's hello names kenaf-cameras, the page's
// PTZ buttons and keys send Axis VAPIX ptz.cgi requests there for the
// followed robot (robot id N is camera=N+1, both programs numbering their
// --robot lists in order), and the page polls query=position a few times
// a second and shows what kenaf-cameras holds, so a console moving the
// camera moves it here too. Without it the page keeps its own PTZ state.
// This steers a rendered camera, never the robot.
const POLL_MS = 250;
const AXIS_ZOOM_MAX = 9999;

export class PtzShare {
    // ptz: the page's { pan (+ left), tilt (+ up), zoom factor, limits };
    // camera(): the camera number of the followed robot
    constructor(ptz, camera) {
        this.ptz = ptz;
        this.camera = camera;
        this.base = '';
        this.timer = null;
        this.gen = 0;        // moves sent: a poll begun before one is stale
        this.polling = false;
        this.polls = 0;      // positions taken from kenaf-cameras
        this.sent = 0;       // moves it accepted
        this.errors = 0;     // failed requests and unreadable answers
        this.queue = Promise.resolve();
    }

    setBase(url) {
        const base = typeof url === 'string' ? url.replace(/\/+$/, '') : '';
        if (base === this.base)
            return;
        this.base = base;
        clearInterval(this.timer);
        this.timer = base ? setInterval(() => this.poll(), POLL_MS) : null;
        if (base)
            this.poll();
    }

    get active() { return this.base !== ''; }

    url(q) {
        return `${this.base}/axis-cgi/com/ptz.cgi?camera=${this.camera()}&${q}`;
    }

    // Axis's zoom 1..9999 and the factor 1..zoom_max, linear (docs/cameras.md)
    axisZoom(f) {
        const m = this.ptz.limits.zoom_max;
        return m > 1 ? Math.round(1 + (f - 1) * (AXIS_ZOOM_MAX - 1) / (m - 1)) : 1;
    }

    zoomFactor(a) {
        const m = this.ptz.limits.zoom_max;
        return 1 + (a - 1) * (m - 1) / (AXIS_ZOOM_MAX - 1);
    }

    // The page's state after a step, sent as absolute values (Axis: pan +
    // right), then read back. Steps go out one after the other, in order,
    // so quick key presses end where the page ended.
    send() {
        const p = this.ptz;
        this.gen++;
        const q = `pan=${(-p.pan).toFixed(2)}&tilt=${p.tilt.toFixed(2)}&zoom=${this.axisZoom(p.zoom)}`;
        this.queue = this.queue.then(async () => {
            try {
                const r = await fetch(this.url(q), { cache: 'no-store' });
                if (r.ok)
                    this.sent++;
                else
                    this.errors++;
            } catch (e) {
                this.errors++;
            }
            await this.poll(true);
        });
        return this.queue;
    }

    async poll(force = false) {
        if (!this.base || (this.polling && !force))
            return;
        const gen = this.gen;
        this.polling = true;
        let text = null;
        try {
            const r = await fetch(this.url('query=position'), { cache: 'no-store' });
            if (r.ok)
                text = await r.text();
        } catch (e) {
            text = null;
        }
        this.polling = false;
        if (gen !== this.gen)
            return; // a move went out meanwhile: its own poll follows
        const v = {};
        for (const line of (text || '').split('\n')) {
            const eq = line.indexOf('=');
            if (eq > 0)
                v[line.slice(0, eq)] = Number(line.slice(eq + 1));
        }
        if (![v.pan, v.tilt, v.zoom].every(Number.isFinite)) {
            this.errors++;
            return;
        }
        this.ptz.pan = v.pan === 0 ? 0 : -v.pan;
        this.ptz.tilt = v.tilt;
        this.ptz.zoom = this.zoomFactor(v.zoom);
        this.polls++;
    }
}
