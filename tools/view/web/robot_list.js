// The robot list: one button per robot, its name and whether its link is
// up; a click makes the camera follow that robot (so do the keys n and N
// and ?robot=NAME). The list is rebuilt only when the robots change, its
// marks refreshed a few times a second.
function el(id) {
    return document.getElementById(id);
}

export class RobotList {
    constructor(pick) {
        this.root = el('robotlist');
        this.pick = pick;
        this.key = '';
        this.buttons = new Map();
        this.next = 0;
    }

    update(now, robots, followId) {
        const key = robots.map(r => `${r.id}:${r.name}`).join('\n');
        if (key !== this.key) {
            this.key = key;
            this.root.replaceChildren();
            this.buttons.clear();
            for (const r of robots) {
                const b = document.createElement('button');
                b.id = `robot-${r.id}`;
                b.textContent = r.name;
                b.addEventListener('click', () => this.pick(r.id));
                this.root.appendChild(b);
                this.buttons.set(r.id, b);
            }
            this.root.hidden = robots.length < 2;
            this.next = 0;
        }
        if (now < this.next)
            return;
        this.next = now + 200;
        for (const r of robots) {
            const b = this.buttons.get(r.id);
            b.classList.toggle('sel', r.id === followId);
            b.classList.toggle('down', !r.linkUp);
        }
    }
}
