// dashboard.js — mcpbench's live page: reads the run's Server-Sent Events
// at /events (see live/dashboard.go for the events) and draws them with
// uPlot (embedded beside this file). Loads nothing from elsewhere.
'use strict';

(function () {
	const MAX_POINTS = 3600; // per chart: an hour of 1 s intervals
	const $ = (id) => document.getElementById(id);
	const fmt = (v, d = 1) => (v == null || !isFinite(v) ? '–' : Number(v).toLocaleString('en-US', { maximumFractionDigits: d }));
	const ms = (v) => (v == null ? '–' : v >= 100 ? fmt(v, 0) : v >= 10 ? fmt(v, 1) : fmt(v, 2));
	const pct = (v) => (v == null ? '–' : fmt(v * 100, 2) + ' %');
	const stay = new URLSearchParams(location.search).has('stay');

	// Charts: each keeps its columns (x = unix seconds) and redraws on data.
	const charts = [];
	function chart(el, series, yLabel) {
		const cols = [[]].concat(series.map(() => []));
		const opts = {
			width: Math.max(300, $(el).clientWidth), height: 220,
			scales: { x: { time: true } },
			legend: { live: false },
			cursor: { drag: { x: false, y: false } },
			series: [{}].concat(series.map((s) => Object.assign({ width: 2, spanGaps: false, points: { show: false } }, s))),
			axes: [{}, { label: yLabel, size: 60 }],
		};
		const c = { el, cols, plot: new uPlot(opts, cols, $(el)), dirty: false };
		charts.push(c);
		return c;
	}
	function push(c, x, ys) {
		c.cols[0].push(x);
		ys.forEach((y, i) => c.cols[i + 1].push(y == null ? null : y));
		if (c.cols[0].length > MAX_POINTS) c.cols.forEach((col) => col.shift());
		c.dirty = true;
	}
	const cRate = chart('c-rate', [
		{ label: 'rate', stroke: '#1f6feb' },
		{ label: 'target', stroke: '#8a8f98', dash: [6, 4] },
	], 'ops/s');
	const cLat = chart('c-lat', [
		{ label: 'p50', stroke: '#2ca02c' },
		{ label: 'p90', stroke: '#ff7f0e' },
		{ label: 'p99', stroke: '#d62728' },
		{ label: 'service p50', stroke: '#2ca02c', dash: [4, 4], width: 1 },
		{ label: 'service p99', stroke: '#d62728', dash: [4, 4], width: 1 },
	], 'ms');
	const cErr = chart('c-err', [
		{ label: 'errors/s', stroke: '#d62728' },
		{ label: 'dropped/s', stroke: '#9467bd' },
	], 'per s');
	const cVUs = chart('c-vus', [
		{ label: 'VUs', stroke: '#1f6feb' },
		{ label: 'sessions', stroke: '#2ca02c' },
		{ label: 'GET streams', stroke: '#ff7f0e' },
	], 'count');
	const cRes = chart('c-res', [
		{ label: 'resumes', stroke: '#1f6feb' },
		{ label: 'reconnects', stroke: '#ff7f0e' },
		{ label: 'faulty streams', stroke: '#d62728' },
	], 'count');

	function redraw() {
		for (const c of charts) {
			if (c.dirty) {
				c.plot.setData(c.cols);
				c.dirty = false;
				$(c.el).dataset.points = String(c.cols[0].length); // for scripts/check-dashboard.sh
			}
		}
	}
	let resizeTimer = 0;
	window.addEventListener('resize', () => {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(() => {
			for (const c of charts) c.plot.setSize({ width: Math.max(300, $(c.el).clientWidth), height: 220 });
		}, 100);
	});

	// Running totals.
	const totals = { dropped: 0, resumes: 0, reconnects: 0, streams: 0, faulty: 0, classes: {}, verdicts: {} };
	let received = 0, missed = 0, lastID = 0, runs = 0, redrawPending = false;

	function table(id, rows) {
		const body = $(id).tBodies[0];
		body.replaceChildren();
		if (rows.length === 0) {
			const tr = body.insertRow();
			tr.className = 'none';
			const td = tr.insertCell();
			td.colSpan = 2;
			td.textContent = 'none';
			return;
		}
		for (const r of rows) {
			const tr = body.insertRow();
			r.forEach((v, i) => {
				const td = tr.insertCell();
				td.textContent = v;
				if (i > 0) td.className = 'n';
			});
		}
	}
	const sorted = (m) => Object.entries(m).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, fmt(n, 0)]);

	function setPhase(text, cls) {
		const p = $('phase');
		p.textContent = text;
		p.className = 'pill ' + (cls || text);
	}

	const handlers = {
		start(d) {
			runs++;
			const bits = [d.profile || 'run', d.target, d.protocol ? 'MCP ' + d.protocol : ''].filter(Boolean);
			$('run').textContent = bits.join(' · ') + (runs > 1 ? ` · run ${runs}` : '');
			setPhase('warm-up');
		},
		interval(d) {
			const x = Date.parse(d.t) / 1000;
			const secs = d.interval_s || 1;
			const all = d.all || {};
			totals.dropped += d.dropped || 0;
			totals.resumes += d.resumes || 0;
			totals.reconnects += d.reconnects || 0;
			totals.streams += d.ledger_streams || 0;
			totals.faulty += d.ledger_faulty || 0;
			for (const [k, n] of Object.entries(d.errors_by_class || {})) totals.classes[k] = (totals.classes[k] || 0) + n;
			for (const [k, n] of Object.entries(d.verdicts || {})) totals.verdicts[k] = (totals.verdicts[k] || 0) + n;

			const svc = d.service_ms || {};
			const has = (all.max_ms || 0) > 0; // latencies of the ops completed in it (warm-up too)
			push(cRate, x, [d.rate, d.target_rate || null]);
			push(cLat, x, [has ? all.p50_ms : null, has ? all.p90_ms : null, has ? all.p99_ms : null, has ? svc.p50_ms : null, has ? svc.p99_ms : null]);
			push(cErr, x, [(all.errors || 0) / secs, (d.dropped || 0) / secs]);
			push(cVUs, x, [d.vus, d.sessions, d.get_streams]);
			push(cRes, x, [d.resumes || 0, d.reconnects || 0, d.ledger_faulty || 0]);

			setPhase(d.phase);
			const rem = d.remaining_s > 0 ? ` · ${fmt(d.remaining_s, 0)} s left` : '';
			$('clock').textContent = `${fmt(d.elapsed_s, 0)} s${rem}`;
			$('t-rate').textContent = fmt(d.rate, 1);
			$('t-target').textContent = d.target_rate ? `ops/s of ${fmt(d.target_rate, 1)} asked (${fmt((100 * d.rate) / d.target_rate, 0)} %)` : 'ops/s (closed model)';
			$('t-resp').textContent = has ? `${ms(all.p50_ms)} · ${ms(all.p90_ms)} · ${ms(all.p99_ms)}` : '–';
			$('t-svc').textContent = has ? `${ms(svc.p50_ms)} · ${ms(svc.p90_ms)} · ${ms(svc.p99_ms)}` : '–';
			$('t-errors').textContent = fmt(all.errors || 0, 0);
			$('t-errors').classList.toggle('bad', (all.errors || 0) > 0);
			$('t-errrate').textContent = has ? `${pct((all.errors || 0) / all.count)} of ${fmt(all.count, 0)} ops, last interval` : 'in the last interval';
			$('t-dropped').textContent = fmt(totals.dropped, 0);
			$('t-dropped').classList.toggle('bad', totals.dropped > 0);
			$('t-vus').textContent = `${fmt(d.vus, 0)} · ${fmt(d.sessions, 0)}`;
			$('t-streams').textContent = `GET streams ${fmt(d.get_streams, 0)} · in flight ${fmt(d.in_flight, 1)}`;
			$('t-resumes').textContent = `${fmt(totals.resumes, 0)} · ${fmt(totals.reconnects, 0)}`;
			$('t-ledger').textContent = `${fmt(totals.faulty, 0)} / ${fmt(totals.streams, 0)}`;
			$('t-ledger').classList.toggle('bad', totals.faulty > 0);
			table('classes', sorted(totals.classes));
			table('verdicts', sorted(totals.verdicts));
			const ops = $('ops').tBodies[0];
			ops.replaceChildren();
			for (const [name, o] of Object.entries(d.ops || {})) {
				const tr = ops.insertRow();
				[name, fmt(o.count, 0), fmt(o.errors, 0), ms(o.p50_ms), ms(o.p99_ms)].forEach((v, i) => {
					const td = tr.insertCell();
					td.textContent = v;
					if (i > 0) td.className = 'n';
				});
			}
		},
		end(d) {
			setPhase('ended');
			$('final-section').hidden = false;
			$('final-title').textContent = runs > 1 ? `Final numbers of run ${runs} (the last step's)` : 'Final numbers';
			const rows = [
				['rate', `${fmt(d.rate, 1)} ops/s` + (d.target_rate ? ` of ${fmt(d.target_rate, 1)} asked` : '')],
				['ops', `${fmt(d.count, 0)} (${fmt(d.errors, 0)} errors, ${pct(d.error_rate)})`],
				['response time (ms)', d.response_time_ms ? `p50 ${ms(d.response_time_ms.p50)} · p90 ${ms(d.response_time_ms.p90)} · p99 ${ms(d.response_time_ms.p99)} · max ${ms(d.response_time_ms.max)}` : '–'],
				['service time (ms)', d.service_time_ms ? `p50 ${ms(d.service_time_ms.p50)} · p90 ${ms(d.service_time_ms.p90)} · p99 ${ms(d.service_time_ms.p99)}` : '–'],
				['dropped', fmt(d.dropped, 0)],
				['errors by class', Object.entries(d.errors_by_class || {}).map(([k, n]) => `${k} ${fmt(n, 0)}`).join(', ') || 'none'],
				['resumes', fmt(d.resumes, 0)],
				['replay ledger', d.ledger ? `${fmt(d.ledger.faulty_streams, 0)} faulty of ${fmt(d.ledger.streams, 0)} streams` : '–'],
				['GET streams ledger', d.get_streams_ledger ? `${fmt(d.get_streams_ledger.faulty_streams, 0)} faulty of ${fmt(d.get_streams_ledger.streams, 0)} streams` : '–'],
				['sessions', d.sessions ? `${fmt(d.sessions.opened, 0)} opened, ${fmt(d.sessions.failed, 0)} failed` : '–'],
				['generator', d.generator ? `${fmt(d.generator.cpu_us_per_op, 1)} µs CPU per op` : '–'],
			];
			if (d.interrupted || d.stop_reason) rows.push(['stopped', d.stop_reason || 'interrupted']);
			const body = $('final').tBodies[0];
			body.replaceChildren();
			for (const [k, v] of rows) {
				const tr = body.insertRow();
				const th = document.createElement('th');
				th.textContent = k;
				tr.appendChild(th);
				tr.insertCell().textContent = v;
			}
		},
		step(d) {
			$('steps-section').hidden = false;
			const tr = $('steps').tBodies[0].insertRow();
			tr.className = d.pass ? 'pass' : 'fail';
			const lat = d.response_time_ms || {};
			const load = d.by === 'rate' ? `${fmt(d.value, 1)}/s` : `${fmt(d.value, 0)} ${d.by}`;
			[d.step, load, fmt(d.achieved_rate, 1), ms(lat.p50), ms(lat.p99), pct(d.error_rate), fmt(d.dropped, 0),
				d.pass ? 'pass' : 'fail' + (d.reasons && d.reasons.length ? ': ' + d.reasons.join('; ') : '')].forEach((v, i) => {
				const td = tr.insertCell();
				td.textContent = v;
				td.className = i === 7 ? 'slo' : 'n';
			});
		},
		report(d) {
			setPhase('done');
			const b = $('report-banner');
			b.hidden = false;
			b.replaceChildren();
			if (!d.ok) {
				b.textContent = 'The run ended. ' + (d.why || '');
				return;
			}
			if (!stay) {
				location.replace(d.url); // the event stream ends when the report has come
				return;
			}
			b.append('The run ended: ');
			const a = document.createElement('a');
			a.href = d.url;
			a.textContent = 'open the HTML report';
			b.append(a);
		},
		bye() {
			es.close();
			setPhase('done');
		},
	};

	const es = new EventSource('events');
	for (const [type, fn] of Object.entries(handlers)) {
		es.addEventListener(type, (e) => {
			const id = Number(e.lastEventId);
			if (id > 0) {
				if (lastID > 0 && id > lastID + 1) {
					missed += id - lastID - 1;
					$('missed').textContent = ` · ${missed} missed`;
				}
				if (id <= lastID) return; // seen before a reconnect
				lastID = id;
			}
			received++;
			$('events-received').textContent = String(received);
			fn(JSON.parse(e.data));
			if (!redrawPending) { // one redraw for a burst (the history a late page gets)
				redrawPending = true;
				setTimeout(() => { redrawPending = false; redraw(); }, 30);
			}
		});
	}
	es.onerror = () => {
		if (es.readyState === EventSource.CONNECTING) setPhase('reconnecting', 'stopping');
	};
})();
