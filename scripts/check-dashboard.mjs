// check-dashboard.mjs — the browser half of check-dashboard.sh (see its
// header).
//
// node check-dashboard.mjs PROFILE_DIR URL SCREENSHOT.png REPORT.png
//
// Opens the live dashboard at URL in the system Chromium
// (/usr/bin/chromium, through playwright-core; no browser download) while
// the run goes, samples its event counter and chart sizes every 200 ms,
// and fails on fewer than 3 changes of the counter during the run,
// charts not drawn or not growing, console or page errors, a request to
// another origin, or no switch to the HTML report at the end.
import { chromium } from 'playwright-core';

const [profile, url, shot, reportShot] = process.argv.slice(2);
if (!profile || !url || !shot || !reportShot) {
	console.error('usage: node check-dashboard.mjs PROFILE_DIR URL SCREENSHOT.png REPORT.png');
	process.exit(2);
}
const origin = new URL(url).origin;
const problems = [];
const requests = [];

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
	await check();
} finally {
	await context.close();
}
console.error(`check-dashboard: ${requests.length} requests, all to ${origin}: ${[...new Set(requests.map((u) => new URL(u).pathname))].join(' ')}`);
if (problems.length > 0) {
	for (const p of problems) console.error(`check-dashboard: FAIL: ${p}`);
	process.exit(1);
}

async function check() {
	const page = await context.newPage();
	page.on('console', (msg) => {
		if (msg.type() === 'error') problems.push(`console error: ${msg.text()} (${msg.location()?.url || page.url()})`);
	});
	page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
	page.on('request', (req) => {
		const u = req.url();
		if (u.startsWith('data:')) return;
		requests.push(u);
		if (new URL(u).origin !== origin) problems.push(`request to another origin: ${u}`);
	});
	page.on('requestfailed', (req) => {
		// The event stream is cut when the page leaves for the report.
		if (new URL(req.url()).pathname === '/events') return;
		problems.push(`failed request: ${req.url()} (${req.failure()?.errorText})`);
	});

	await page.goto(url, { waitUntil: 'load' });
	const seen = []; // the counter's values while the live page showed, each change once
	let points = [], shotTaken = false;
	const deadline = Date.now() + 60_000;
	for (;;) {
		if (Date.now() > deadline) {
			problems.push('the page did not switch to the report within 60 s');
			break;
		}
		if (new URL(page.url()).pathname === '/report') break;
		let s;
		try {
			s = await page.evaluate(() => ({
				n: Number(document.getElementById('events-received')?.textContent || 0),
				phase: document.getElementById('phase')?.textContent,
				canvases: [...document.querySelectorAll('.uplot canvas')].map((c) => c.width * c.height > 0),
				rate: document.getElementById('t-rate')?.textContent,
				sideways: document.documentElement.scrollWidth > window.innerWidth,
			}));
		} catch {
			continue; // the page is navigating to the report
		}
		if (seen.length === 0 || seen[seen.length - 1].n !== s.n) {
			seen.push(s);
			console.error(`check-dashboard: events ${s.n}, phase ${s.phase}, rate ${s.rate}`);
		}
		if (s.sideways && !problems.some((p) => p.startsWith('the page scrolls'))) problems.push('the page scrolls sideways at 1280 px');
		if (!shotTaken && s.n >= 6 && s.phase === 'measure') {
			points.push(await chartPoints(page));
			await page.screenshot({ path: shot, fullPage: true });
			shotTaken = true;
		} else if (shotTaken && points.length === 1 && s.n >= 9) {
			points.push(await chartPoints(page));
		}
		await page.waitForTimeout(200);
	}
	const changes = seen.filter((s, i) => i > 0 && s.n > seen[i - 1].n).length;
	if (changes < 3) problems.push(`the event counter changed ${changes} times during the run, want at least 3 (values: ${seen.map((s) => s.n).join(', ')})`);
	const last = seen[seen.length - 1];
	if (!last || last.canvases.length !== 5 || !last.canvases.every(Boolean)) problems.push(`want 5 drawn charts, have ${JSON.stringify(last?.canvases)}`);
	if (!shotTaken) problems.push('no screenshot: the page never showed 6 events in the measure phase');
	if (points.length === 2 && !(points[1] > points[0])) problems.push(`the charts did not grow: ${points[0]} then ${points[1]} points`);
	if (points.length < 2) problems.push(`chart growth not seen (${points.length} samples)`);
	else console.error(`check-dashboard: throughput chart points ${points[0]} → ${points[1]}`);

	if (new URL(page.url()).pathname === '/report') {
		await page.waitForLoadState('load');
		const rows = await page.locator('#summary-table tbody tr').count();
		if (rows < 1) problems.push('the report has no summary table');
		await page.screenshot({ path: reportShot }); // its top: the report is long
		console.error(`check-dashboard: switched to the report (${rows} summary rows)`);
	}
}

// chartPoints returns the throughput chart's number of points (the page
// keeps it in the chart's data-points).
async function chartPoints(page) {
	return page.evaluate(() => Number(document.getElementById('c-rate')?.dataset.points || 0));
}
