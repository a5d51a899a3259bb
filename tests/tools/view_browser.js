// Drives Debian's chromium (headless) through trowel view's page with
// playwright-core: for each entry named on the command line, opens
// URL#entry=ENTRY, waits for the preview to say it has drawn
// (data-trowel-ready="1"), and prints one JSON line with what the page
// recorded of its drawing (the preview's data-trowel-* attributes), the
// console errors, and for animations the frame after one "step".
// Screenshots go to SHOTS/<n>.png when SHOTS is set.
//   node view_browser.js URL ENTRY...
'use strict';
const path = require('path');
const modules = process.env.TROWEL_NODE_DIR || path.join(__dirname, '..', '..', 'build', 'node');
const { chromium } = require(path.join(modules, 'node_modules', 'playwright-core'));

async function main() {
  const [url, ...entries] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--use-gl=angle', '--use-angle=swiftshader',
           '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForSelector('body[data-trowel-loaded="1"]', { timeout: 30000 });
  let n = 0;
  for (const entry of entries) {
    errors.length = 0;
    const hash = '#entry=' + encodeURIComponent(entry).replace(/%2F/g, '/');
    await page.evaluate((h) => { location.hash = h; }, hash);
    const out = { entry };
    try {
      await page.waitForFunction((want) => {
        const p = document.getElementById('preview');
        return p && p.dataset.trowelReady === '1' && p.dataset.trowelEntry === want;
      }, entry, { timeout: 60000 });
      out.data = await page.evaluate(() => ({ ...document.getElementById('preview').dataset }));
      if (out.data.trowelPreview === 'animation') { // pause, then step once
        const frame = () => page.evaluate(() => document.getElementById('preview').dataset.trowelFrame);
        await page.click('#preview .toolbar button:nth-of-type(1)');
        out.paused = await frame();
        await page.click('#preview .toolbar button:nth-of-type(3)');
        out.stepped = await frame();
      }
      out.rows = await page.evaluate(() => document.querySelectorAll('#rows .row').length);
    } catch (e) {
      out.timeout = String(e).split('\n')[0];
      out.data = await page.evaluate(() => ({ ...document.getElementById('preview').dataset }));
    }
    out.errors = errors.filter((e) => !/favicon/.test(e));
    if (process.env.SHOTS) await page.screenshot({ path: path.join(process.env.SHOTS, (n++) + '.png') });
    console.log(JSON.stringify(out));
  }
  await browser.close();
}

main().catch((e) => { console.error(String(e)); process.exit(1); });
