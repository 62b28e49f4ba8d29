// check-html.mjs — the browser half of check-html.sh (see its header).
//
// node check-html.mjs PROFILE_DIR KIND=REPORT.html=SCREENSHOT.png[=TERMINAL.txt] ...
//
// Opens each REPORT.html in the system Chromium (/usr/bin/chromium, through
// playwright-core; no browser download), fails on console or page errors,
// on any request that is not file: or data:, on a report missing what its
// kind must show (run: the summary table and at least 3 rendered <svg>
// charts; sweep: the verdict, at least 2 step rows and 3 charts; soak: 4
// verdict rows, the trend chart, the summary table and at least 5 charts;
// drops: a run that dropped arrivals, with its warning and dropped-ops
// table; sweep-drops: a sweep whose steps dropped arrivals, with a drop
// warning and its table of those steps), on a run's verdict, notes,
// not-applicable lines and warnings (head, cause, remedy) that differ
// from what TERMINAL.txt (the run's terminal output) printed before its
// first table, or a sweep's that differ from the last paragraph of its
// TERMINAL.txt (the sweep's stdout),
// on a table header whose text overflows its cell (over its neighbours)
// or on a page that scrolls sideways at 1280 px; then takes a full-page
// screenshot of each (and of its replay ledger table, beside it as
// *-ledger.png).
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';

const [profile, ...jobs] = process.argv.slice(2);
if (!profile || jobs.length === 0) {
	console.error('usage: node check-html.mjs PROFILE_DIR KIND=REPORT.html=SCREENSHOT.png ...');
	process.exit(2);
}

// What each kind of report must show: CSS selector → fewest matches.
const wants = {
	run: { '#summary-table tbody tr': 1, '#verdict .verdict': 1 },
	drops: { '#summary-table tbody tr': 1, '#verdict .verdict': 1, '#verdict .warning': 1, '#dropped-table tbody tr': 1 },
	sweep: { '#verdict .vline': 2, '#steps-table tbody tr': 2, '#chart-capacity-latency svg': 1 },
	'sweep-drops': { '#verdict .vline': 2, '#verdict .warning': 1, '#dropped-table tbody tr': 1, '#steps-table tbody tr': 2, '#chart-capacity-latency svg': 1 },
	soak: { '#soak-table tbody tr': 4, '#chart-soak-trends svg': 1, '#summary-table tbody tr': 1 },
};
const minCharts = { run: 3, drops: 3, sweep: 3, 'sweep-drops': 3, soak: 5 };

// The lines of a run's terminal output that its report must show too: from
// the verdict to the first blank line, those the report model makes (the
// Next: line, which names files, apart).
function terminalLines(path) {
	const text = readFileSync(path, 'utf8');
	const lines = text.split('\n');
	const at = lines.findIndex((l) => l.startsWith('Verdict: '));
	if (at < 0) return null;
	const out = [];
	for (const l of lines.slice(at)) {
		if (l.trim() === '') break;
		const t = l.trim();
		if (/^(Verdict: |INTERRUPTED: |ABORTED: |note: |not applicable: |WARNING |cause: |remedy: )/.test(t)) out.push(t);
	}
	return out;
}

// The lines of a sweep's terminal output (its stdout) that its report must
// show too: the last paragraph, the sweep's report model (verdict lines,
// not-applicable lines, each warning's head, cause and remedy).
function sweepTerminalLines(path) {
	const paras = readFileSync(path, 'utf8').replace(/\n+$/, '').split('\n\n');
	const last = paras[paras.length - 1];
	if (!/^(Maximum sustainable rate|Highest load)/.test(last)) return null;
	return last.split('\n').map((l) => l.trim());
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
	for (const job of jobs) {
		const [kind, html, shot, terminal] = job.split('=');
		if (!wants[kind] || !html || !shot) {
			problems.push(`bad job ${job}: want KIND=REPORT.html=SCREENSHOT.png[=TERMINAL.txt], KIND one of ${Object.keys(wants)}`);
			continue;
		}
		await check(kind, html, shot, terminal);
	}
} finally {
	await context.close();
}
if (problems.length > 0) {
	for (const p of problems) console.error(`check-html: FAIL: ${p}`);
	process.exit(1);
}

async function check(kind, html, shot, terminal) {
	const page = await context.newPage();
	const tag = (m) => problems.push(`${kind}: ${m}`);
	page.on('console', (msg) => {
		if (msg.type() === 'error') tag(`console error: ${msg.text()}`);
	});
	page.on('pageerror', (err) => tag(`page error: ${err.message}`));
	page.on('request', (req) => {
		if (!/^(file|data|about):/.test(req.url())) tag(`external request: ${req.url()}`);
	});
	page.on('requestfailed', (req) => tag(`failed request: ${req.url()}`));

	await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });

	const info = await page.evaluate((want) => {
		const counts = {};
		for (const sel of Object.keys(want)) counts[sel] = document.querySelectorAll(sel).length;
		const svgs = [...document.querySelectorAll('svg')].map((s) => {
			const r = s.getBoundingClientRect();
			return { w: Math.round(r.width), h: Math.round(r.height), texts: s.querySelectorAll('text').length };
		});
		const sections = [...document.querySelectorAll('section[id]')].map((s) => s.id);
		return {
			title: document.title,
			vlines: [...document.querySelectorAll('#verdict .vline')].map((e) => e.innerText.trim()),
			counts,
			svgs,
			sections,
			captions: document.querySelectorAll('figcaption').length,
			scripts: document.querySelectorAll('script').length,
			// A header whose text is wider than its cell spills over its
			// neighbours (an op name with no space to wrap at).
			spilled: [...document.querySelectorAll('thead th')]
				.filter((th) => th.scrollWidth > th.clientWidth + 1)
				.map((th) => `${th.closest('section[id]')?.id ?? '?'}: "${th.textContent}" (${th.scrollWidth} px in ${th.clientWidth})`),
			overflowX: document.documentElement.scrollWidth > window.innerWidth + 1 ||
				[...document.querySelectorAll('.scroll')].some((d) => d.scrollWidth > d.clientWidth + 1),
		};
	}, wants[kind]);
	const rendered = info.svgs.filter((s) => s.w > 0 && s.h > 0 && s.texts > 0);
	for (const [sel, n] of Object.entries(wants[kind])) {
		if (info.counts[sel] < n) tag(`${info.counts[sel]} of ${sel}, want at least ${n}`);
	}
	if (rendered.length < minCharts[kind]) tag(`only ${rendered.length} rendered <svg> charts (want at least ${minCharts[kind]}): ${JSON.stringify(info.svgs)}`);
	if (info.captions < rendered.length) tag(`${info.captions} captions for ${rendered.length} charts`);
	if (info.scripts > 0) tag(`${info.scripts} <script> elements (the report needs none)`);
	if (info.overflowX) tag('the page or one of its tables scrolls horizontally at 1280 px');
	for (const h of info.spilled) tag(`table header overflows its cell, over its neighbours: ${h}`);
	if (terminal) {
		const sweep = kind.startsWith('sweep');
		const want = sweep ? sweepTerminalLines(terminal) : terminalLines(terminal);
		if (!want) tag(`no ${sweep ? 'sweep verdict paragraph' : 'Verdict: line'} in the terminal output ${terminal}`);
		else if (JSON.stringify(want) !== JSON.stringify(info.vlines)) {
			tag(`the report's verdict and warnings differ from the terminal's:\n  terminal ${JSON.stringify(want)}\n  report   ${JSON.stringify(info.vlines)}`);
		}
		if (kind === 'drops' && !(info.vlines[0] || '').startsWith('Verdict: WARN')) tag(`a run with drops reads ${info.vlines[0]}`);
		if (kind === 'sweep-drops' && !info.vlines.some((l) => l.startsWith('WARNING W-DROPS-'))) tag(`a sweep whose steps dropped arrivals names no drop warning: ${JSON.stringify(info.vlines)}`);
	}

	await page.screenshot({ path: shot, fullPage: true });
	// The replay ledger's table alone, where long op names head columns.
	if (await page.locator('#ledger').count() > 0) {
		await page.locator('#ledger').screenshot({ path: shot.replace(/\.png$/, '-ledger.png') });
	}
	await page.close();
	console.error(`check-html: ${kind} "${info.title}": sections ${info.sections.join(', ')}; ` +
		`${JSON.stringify(info.counts)}; ${info.vlines.length} verdict and warning lines${terminal ? " (the terminal's)" : ""}; svg charts ${rendered.map((s) => `${s.w}x${s.h}`).join(', ')}; screenshot ${shot}`);
}
