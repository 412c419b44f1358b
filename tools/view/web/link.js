// The page's WebSocket to kenaf-view: JSON frames in (hello, world, state,
// link), measurement reports out, nothing else (the view never commands a
// robot). Reconnects on its own after a close or error, waiting 0.25 s,
// then twice as long each time up to 5 s, with some jitter so many pages
// do not come back in step.
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5000;

export function defaultSocketUrl(loc) {
    const base = loc.pathname.replace(/[^/]*$/, '');
    return (loc.protocol === 'https:' ? 'wss://' : 'ws://') + loc.host + base + 'ws';
}

export class ViewLink {
    // handlers: { message(obj, arrivalMs), open(), close(reason) }
    constructor(url, handlers) {
        this.url = url;
        this.h = handlers;
        this.ws = null;
        this.backoff = BACKOFF_MIN_MS;
        this.timer = null;
        this.connected = false;
        this.connects = 0;
        this.badFrames = 0;
        this.open();
    }

    open() {
        this.timer = null;
        let ws;
        try {
            ws = new WebSocket(this.url);
        } catch (e) {
            this.retry(String(e));
            return;
        }
        this.ws = ws;
        ws.onopen = () => {
            this.connected = true;
            this.connects++;
            this.backoff = BACKOFF_MIN_MS;
            this.h.open();
        };
        ws.onmessage = ev => {
            const now = performance.now();
            if (typeof ev.data !== 'string') {
                this.badFrames++;
                return;
            }
            let m;
            try {
                m = JSON.parse(ev.data);
            } catch (e) {
                this.badFrames++;
                return;
            }
            if (m && typeof m === 'object' && typeof m.type === 'string')
                this.h.message(m, now);
            else
                this.badFrames++;
        };
        ws.onclose = ev => {
            if (this.ws !== ws)
                return;
            this.ws = null;
            const was = this.connected;
            this.connected = false;
            this.retry(ev.reason || (was ? 'connection closed' : 'cannot connect'));
        };
        ws.onerror = () => { /* onclose follows and reconnects */ };
    }

    retry(reason) {
        this.h.close(reason);
        const wait = this.backoff * (0.8 + 0.4 * Math.random());
        this.backoff = Math.min(BACKOFF_MAX_MS, this.backoff * 2);
        this.timer = setTimeout(() => this.open(), wait);
    }

    // A measurement report for the server's log (bench and test figures).
    report(obj) {
        if (this.ws && this.connected)
            this.ws.send(JSON.stringify(Object.assign({ type: 'report' }, obj)));
    }
}
