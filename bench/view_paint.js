// bench/view_paint.js URL RUNS: loads trowel view's page RUNS times in
// headless chromium (playwright-core) and prints, per run, the milliseconds
// from navigation to the tree drawn (body[data-trowel-loaded]) and to the
// first preview ready. Used by bench_view.sh.
'use strict';
const path = require('path');
const modules = process.env.TROWEL_NODE_DIR || path.join(__dirname, '..', 'build', 'node');
const { chromium } = require(path.join(modules, 'node_modules', 'playwright-core'));

(async () => {
  const [url, runs] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking'] });
  for (let i = 0; i < Number(runs || 5); i++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForSelector('#rows .row', { timeout: 60000 });
    const tree = Date.now() - t0;
    await page.waitForSelector('#preview[data-trowel-ready="1"]', { timeout: 60000 });
    const ready = Date.now() - t0;
    const rows = await page.evaluate(() => document.querySelectorAll('#rows .row').length);
    console.log(tree + ' ' + ready + ' ' + rows);
    await page.close();
  }
  await browser.close();
})().catch((e) => { console.error(String(e)); process.exit(1); });
