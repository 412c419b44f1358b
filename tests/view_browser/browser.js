// Debian's headless Chromium, driven through playwright-core for kenaf-view's
// browser test and bench. Once the browser runs it listens on a free
// loopback TCP port, prints "PORT n" and takes one connection: one JSON
// command per line in, one JSON answer per line out ({"ok":true,...} or
// {"ok":false,"error":...}); the C test decides what to do and what to
// assert. It ends with the connection or at "quit". Commands:
//   {"cmd":"open","url":U}            load the page (waits for kenafView)
//   {"cmd":"goto","url":U}            load any page (kenaf-cameras's <img> test)
//   {"cmd":"shot","name":N}           screenshot to SHOT_DIR/N.png + pixel measures
//   {"cmd":"differ","a":N1,"b":N2}    fraction of pixels that differ
//   {"cmd":"click","selector":S}      click a page element
//   {"cmd":"key","key":K}             press a key (Playwright's names: "n", "Shift+N")
//   {"cmd":"eval","expr":E}           value of a page expression
//   {"cmd":"until","expr":E,"ms":T}   wait until the expression is true
//   {"cmd":"frames","ms":T}           frames the page drew in T ms -> fps
//   {"cmd":"quit"}
// Environment: SHOT_DIR (where screenshots go), PROFILE_PARENT (where the
// fresh Chromium profile is made, default the temporary directory),
// CHROMIUM (default /usr/bin/chromium), VIEW_W / VIEW_H (window size,
// default 960 x 540).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const net = require('net');
const readline = require('readline');
const { chromium } = require('playwright-core');
const { decodePng, analyse, differ } = require('./pixels.js');

const shotDir = process.env.SHOT_DIR || '.';
// Without the networking switches Chromium keeps calling out (updates,
// field trials, sync), which a closed network answers with floods of errors.
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
              '--disable-background-networking', '--disable-component-update', '--disable-sync',
              '--disable-default-apps', '--disable-extensions', '--no-default-browser-check'];

async function main() {
    const profile = fs.mkdtempSync(path.join(process.env.PROFILE_PARENT || os.tmpdir(),
                                             'kenaf-view-chromium-'));
    const ctx = await chromium.launchPersistentContext(profile, {
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        headless: true,
        args: ARGS, // the profile directory above is its fresh --user-data-dir
        viewport: { width: Number(process.env.VIEW_W || 960), height: Number(process.env.VIEW_H || 540) },
    });
    const page = ctx.pages()[0] || await ctx.newPage();
    page.on('pageerror', e => console.error('page error:', e.message));
    page.on('console', m => {
        if (m.type() === 'error')
            console.error('page console:', m.text());
    });
    const images = new Map();
    const handlers = {
        async open(c) {
            await page.goto(c.url);
            await page.waitForFunction(() => window.kenafView !== undefined, null, { timeout: 20000 });
            return {};
        },
        async goto(c) {
            await page.goto(c.url, { waitUntil: 'commit' });
            return {};
        },
        async shot(c) {
            const file = path.join(shotDir, c.name + '.png');
            const buf = await page.screenshot({ path: file });
            const img = decodePng(buf);
            images.set(c.name, img);
            return { file, ...analyse(img) };
        },
        async differ(c) {
            const a = images.get(c.a), b = images.get(c.b);
            if (!a || !b)
                throw new Error('no such screenshot');
            return { fraction: differ(a, b) };
        },
        async click(c) {
            await page.click(c.selector, { timeout: 5000 });
            return {};
        },
        async key(c) {
            await page.keyboard.press(c.key);
            return {};
        },
        async eval(c) {
            return { value: await page.evaluate(c.expr) };
        },
        async until(c) {
            await page.waitForFunction(c.expr, null, { timeout: c.ms || 10000, polling: 50 });
            return {};
        },
        async frames(c) {
            const r = await page.evaluate(async ms => {
                const f0 = window.kenafView.frames, t0 = performance.now();
                await new Promise(res => setTimeout(res, ms));
                return { frames: window.kenafView.frames - f0, ms: performance.now() - t0 };
            }, c.ms || 5000);
            return { ...r, fps: 1000 * r.frames / r.ms };
        },
    };
    const conn = await new Promise((resolve, reject) => {
        const srv = net.createServer(c => {
            srv.close();
            resolve(c);
        });
        srv.on('error', reject);
        srv.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${srv.address().port}\n`));
    });
    const rl = readline.createInterface({ input: conn });
    for await (const line of rl) {
        let c, out;
        try {
            c = JSON.parse(line);
            if (c.cmd === 'quit')
                break;
            const h = handlers[c.cmd];
            if (!h)
                throw new Error('unknown command ' + c.cmd);
            out = { ok: true, ...(await h(c)) };
        } catch (e) {
            out = { ok: false, error: String(e && e.message ? e.message : e).split('\n')[0] };
        }
        conn.write(JSON.stringify(out) + '\n');
    }
    conn.destroy();
    await ctx.close();
    fs.rmSync(profile, { recursive: true, force: true });
}

main().catch(e => {
    console.error('browser.js:', e && e.stack ? e.stack : e);
    process.exit(1);
});
