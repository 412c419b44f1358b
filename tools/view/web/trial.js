// The trial panel: the followed robot's trial on a test apparatus, as the
// robot reports it (kenaf-view's "trial" message, docs/view.md): which
// repetition, its time and faults, the score so far, the faults by kind
// and the time left. Hidden when the robot runs no trial.
const KINDS = [['tip_over', 'tip-over'], ['wall', 'wall'], ['lane', 'lane'],
               ['estop', 'e-stop'], ['assist', 'reset/assist']];

function clock(s) {
    const m = Math.floor(s / 60);
    return `${m}:${(s - 60 * m).toFixed(1).padStart(4, '0')}`;
}

// The panel's lines for trial x (the message's "trial" object): title,
// repetition, score, faults, time left.
export function trialLines(x) {
    const course = x.course === 'figure8' ? 'lap' : 'traverse';
    const rep = x.ended ? `ended: ${x.end || 'over'}`
        : x.under_way ? `${course} ${x.rep + 1} of ${x.repetitions} under way  ${clock(x.rep_elapsed_s)}`
            + (x.rep_faults ? `  ${x.rep_faults} fault${x.rep_faults === 1 ? '' : 's'}` : '')
        : `${course} ${x.rep + 1} of ${x.repetitions}: waiting at the gate`;
    const score = `${x.successes} of ${x.completed} completed without a fault`;
    const kinds = KINDS.filter(([k]) => x.by_kind && x.by_kind[k] > 0)
        .map(([k, name]) => `${name} ${x.by_kind[k]}`);
    const faults = `faults ${x.faults}` + (kinds.length ? `: ${kinds.join(', ')}` : '');
    const left = typeof x.left_s === 'number' ? `time left ${clock(x.left_s)} of ${clock(x.limit_s)}` : '';
    return { title: `TRIAL ${x.name}`, rep, score, faults, left };
}

export class TrialPanel {
    constructor(root) {
        this.root = root;
        this.parts = {};
        for (const k of ['title', 'rep', 'score', 'faults', 'left']) {
            const d = document.createElement('div');
            if (k === 'title')
                d.className = 'title';
            else if (k !== 'rep')
                d.className = 'dim';
            d.id = `trial-${k}`;
            root.appendChild(d);
            this.parts[k] = d;
        }
    }

    // trial: the followed robot's trial object, or null/undefined
    update(trial) {
        const show = !!trial && typeof trial === 'object';
        this.root.hidden = !show;
        if (!show)
            return;
        const lines = trialLines(trial);
        for (const [k, d] of Object.entries(this.parts))
            if (d.textContent !== lines[k])
                d.textContent = lines[k];
    }
}
