// The page measuring itself: frames drawn, frames per second over the last
// second, time spent per frame, and for each state frame the time from the server receiving its
// STATUS to the end of the first frame drawn after it arrived (the first
// frame that shows it). The server stamps "srv_us" on its own monotonic
// clock; the page's clock is another, so their offset is taken as the
// smallest (arrival - srv_us) seen: a delay over that minimum counts, the
// constant part of the one-way delay (well under a millisecond on one
// machine) does not.
const KEEP = 2000; // latency samples kept

export class Meter {
    constructor() {
        this.frames = 0;
        this.times = [];
        this.offset = Infinity;
        this.samples = [];
        this.total = 0;
        this.work = [];
    }

    arrived(track, arrival) {
        const p = track.pendingLatency;
        if (p && Number.isFinite(p.srvUs))
            this.offset = Math.min(this.offset, arrival - p.srvUs / 1000);
    }

    // now: when the frame was drawn; start: when its work began
    rendered(tracks, now, start) {
        this.frames++;
        this.work.push(now - start);
        if (this.work.length > 120)
            this.work.shift();
        this.times.push(now);
        while (this.times.length && this.times[0] < now - 1000)
            this.times.shift();
        for (const t of tracks) {
            const p = t.pendingLatency;
            if (!p)
                continue;
            t.pendingLatency = null;
            const from = Number.isFinite(p.srvUs) && Number.isFinite(this.offset)
                ? p.srvUs / 1000 + this.offset : p.arrival;
            this.samples.push(now - from);
            this.total++;
            if (this.samples.length > KEEP)
                this.samples.shift();
        }
    }

    fps(now) {
        return this.times.filter(t => t >= now - 1000).length;
    }

    // over the last `last` samples (all kept ones by default); total: every
    // sample ever taken, so a bench can ask for the ones of its own window
    latency(last = KEEP) {
        const s = this.samples.slice(-Math.max(1, last)).sort((a, b) => a - b);
        const q = f => (s.length ? s[Math.min(s.length - 1, Math.floor(f * s.length))] : null);
        return { n: s.length, total: this.total, p50: q(0.5), p95: q(0.95),
                 max: s.length ? s[s.length - 1] : null };
    }

    // mean time the page spent on a frame (scene update and draw calls),
    // over the last 120 frames
    workMs() {
        return this.work.length ? this.work.reduce((a, b) => a + b, 0) / this.work.length : null;
    }

    summary(now) {
        return { frames: this.frames, fps: this.fps(now), work_ms: this.workMs(), latency_ms: this.latency() };
    }
}
