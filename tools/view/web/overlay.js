// The overlay: the followed robot's readings (belt speeds, flipper angles,
// roll/pitch/yaw, battery, flags), a line per other robot, the view and
// PTZ settings, "no signal" while the robot's link or the page's socket is
// down, and name labels over the robots when there are several. Text is
// refreshed a few times a second; labels follow the robots every frame.
const DEG = 180 / Math.PI;
const FLAGS = ['ESTOP', 'WATCHDOG', 'STALE', 'BACKEND_UP'];
const OTHERS_MAX = 8; // lines for the other robots

function el(id) {
    return document.getElementById(id);
}

// an angle in (-180, 180] degrees
function angle(rad) {
    const d = rad * DEG;
    return d - 360 * Math.ceil((d - 180) / 360);
}

function fixed(v, n) {
    return (v >= 0 ? '+' : '') + v.toFixed(n);
}

export class Overlay {
    constructor(show) {
        this.root = el('hud');
        this.root.hidden = !show;
        this.labels = el('labels');
        this.labelEls = new Map();
        this.lamps = {};
        const box = el('flags');
        for (const f of FLAGS) {
            const s = document.createElement('span');
            s.className = 'lamp';
            s.textContent = f;
            box.appendChild(s);
            this.lamps[f] = s;
        }
        this.nextText = 0;
    }

    toggle() {
        this.root.hidden = !this.root.hidden;
    }

    // Called every frame; the text only when due (every 100 ms).
    update(now, st) {
        this.noSignal(st);
        if (now < this.nextText || this.root.hidden)
            return;
        this.nextText = now + 100;
        const r = st.robot, s = r && r.last;
        el('rname').textContent = r ? r.name : '(no robot)';
        el('view').textContent = st.viewLabel;
        el('world').textContent = st.worldLabel;
        el('rate').textContent = st.scale < 0.999
            ? `${st.fps.toFixed(0)} fps at ${(100 * st.scale).toFixed(0)} %` : `${st.fps.toFixed(0)} fps`;
        if (s) {
            el('belts').textContent = `L ${fixed(s.belt[0], 2)}  R ${fixed(s.belt[1], 2)} m/s`;
            const f = s.flippers.map(a => fixed(a * DEG, 0).padStart(4));
            el('flip').textContent = `FL ${f[0]}  FR ${f[1]}  RL ${f[2]}  RR ${f[3]} deg`;
            el('att').textContent =
                `roll ${fixed(angle(s.rpy[0]), 1)}  pitch ${fixed(angle(s.rpy[1]), 1)}  yaw ${fixed(angle(s.rpy[2]), 1)} deg`;
            el('pos').textContent = `x ${fixed(s.pos[0], 2)}  y ${fixed(s.pos[1], 2)}  z ${fixed(s.pos[2], 2)} m  t ${s.t.toFixed(1)} s`;
            el('batt').textContent = `${s.battery.toFixed(1)} V`;
            for (const f of FLAGS)
                this.lamps[f].className = 'lamp ' + (s.flags[f] ? (f === 'BACKEND_UP' ? 'ok' : 'on') : 'off');
        }
        const others = st.robots.filter(o => o !== r).map(o => {
            const l = o.last;
            const what = !o.linkUp ? 'no signal'
                : l ? `x ${l.pos[0].toFixed(2)} y ${l.pos[1].toFixed(2)}  belts ${l.belt[0].toFixed(2)}/${l.belt[1].toFixed(2)}`
                : 'waiting';
            return `${o.name}: ${what}`;
        });
        // a fleet's other robots are in the robot list: a few lines here
        el('others').textContent = (others.length > OTHERS_MAX
            ? [...others.slice(0, OTHERS_MAX - 1), `... and ${others.length - OTHERS_MAX + 1} more`]
            : others).join('\n');
        el('ptzset').hidden = st.view !== 'ptz';
        el('ptzval').textContent = `pan ${fixed(st.ptz.pan, 0)}  tilt ${fixed(st.ptz.tilt, 0)}  zoom ${st.ptz.zoom.toFixed(1)}x`;
    }

    noSignal(st) {
        const b = el('nosignal');
        const why = !st.connected ? 'no signal: reconnecting to kenaf-view'
            : !st.robot ? 'no signal: no robot'
            : !st.robot.linkUp ? `no signal: ${st.robot.linkReason || 'robot silent'}`
            : !st.robot.last ? 'no signal: waiting for the first state'
            : '';
        if (b.textContent !== why)
            b.textContent = why;
        b.hidden = !why;
    }

    // Name labels over every robot when there are several: screen positions
    // from project(robot) -> {x, y, visible} in CSS pixels.
    labelRobots(robots, project) {
        const many = robots.length > 1;
        for (const r of robots) {
            let e = this.labelEls.get(r.id);
            if (!e) {
                e = document.createElement('div');
                e.className = 'label';
                this.labels.appendChild(e);
                this.labelEls.set(r.id, e);
            }
            const p = many ? project(r) : null;
            if (!p || !p.visible) {
                e.hidden = true;
                continue;
            }
            const text = r.linkUp ? r.name : `${r.name} (no signal)`;
            if (e.textContent !== text)
                e.textContent = text;
            e.hidden = false;
            e.style.transform = `translate(${p.x.toFixed(0)}px, ${p.y.toFixed(0)}px) translate(-50%, -130%)`;
        }
    }
}
