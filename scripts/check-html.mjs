// check-html.mjs — the browser half of check-html.sh (see its header).
//
// node check-html.mjs REPORT.html SCREENSHOT.png PROFILE_DIR
//
// Opens REPORT.html in the system Chromium (/usr/bin/chromium, through
// playwright-core; no browser download), fails on console or page errors,
// on any request that is not file: or data:, on a missing summary table
// or on fewer than 3 rendered <svg> charts; then takes a full-page
// screenshot.
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';

const [html, shot, profile] = process.argv.slice(2);
if (!html || !shot || !profile) {
	console.error('usage: node check-html.mjs REPORT.html SCREENSHOT.png PROFILE_DIR');
	process.exit(2);
}

const problems = [];
const context = await chromium.launchPersistentContext(profile, {
	executablePath: '/usr/bin/chromium',
	headless: true,
	viewport: { width: 1280, height: 900 },
	args: [
		'--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync',
	],
});
try {
	const page = context.pages()[0] ?? await context.newPage();
	page.on('console', (msg) => {
		if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
	});
	page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
	page.on('request', (req) => {
		if (!/^(file|data|about):/.test(req.url())) problems.push(`external request: ${req.url()}`);
	});
	page.on('requestfailed', (req) => problems.push(`failed request: ${req.url()}`));

	await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });

	const info = await page.evaluate(() => {
		const rows = document.querySelectorAll('#summary-table tbody tr').length;
		const svgs = [...document.querySelectorAll('svg')].map((s) => {
			const r = s.getBoundingClientRect();
			return { w: Math.round(r.width), h: Math.round(r.height), texts: s.querySelectorAll('text').length };
		});
		const sections = [...document.querySelectorAll('section[id]')].map((s) => s.id);
		return {
			title: document.title,
			rows,
			svgs,
			sections,
			scripts: document.querySelectorAll('script').length,
			overflowX: document.documentElement.scrollWidth > window.innerWidth + 1 ||
				[...document.querySelectorAll('.scroll')].some((d) => d.scrollWidth > d.clientWidth + 1),
		};
	});
	const rendered = info.svgs.filter((s) => s.w > 0 && s.h > 0 && s.texts > 0);
	if (info.rows < 1) problems.push('no summary table (#summary-table tbody tr)');
	if (rendered.length < 3) problems.push(`only ${rendered.length} rendered <svg> charts (want at least 3): ${JSON.stringify(info.svgs)}`);
	if (info.scripts > 0) problems.push(`${info.scripts} <script> elements (the report needs none)`);
	if (info.overflowX) problems.push('the page or one of its tables scrolls horizontally at 1280 px');

	await page.screenshot({ path: shot, fullPage: true });
	console.error(`check-html: "${info.title}": sections ${info.sections.join(', ')}; ` +
		`${info.rows} summary rows; svg charts ${rendered.map((s) => `${s.w}x${s.h}`).join(', ')}`);
} finally {
	await context.close();
}
if (problems.length > 0) {
	for (const p of problems) console.error(`check-html: FAIL: ${p}`);
	process.exit(1);
}
