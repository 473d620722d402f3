// The dashboard's only script: the event stream keeps the rows current, buttons and
// forms call the JSON API. Agent text is only ever set as textContent.
'use strict';
(() => {
  const csrf = document.querySelector('meta[name=csrf]').content;
  const body = document.body;
  const agentID = body.dataset.agent || '';
  const rows = new Map();

  const say = (msg, bad) => {
    const el = document.getElementById('flash');
    el.textContent = msg;
    el.className = bad ? 'flash bad' : 'flash';
  };
  const api = async (method, path, data) => {
    const r = await fetch(path, { method, credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Ctx-CSRF': csrf },
      body: data === undefined ? undefined : JSON.stringify(data) });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(j.error || r.status + ' ' + r.statusText);
    return j;
  };
  const ago = (since) => {
    const s = Math.max(0, (Date.now() - Date.parse(since)) / 1000);
    if (!isFinite(s) || since.startsWith('0001')) return '';
    if (s < 60) return Math.floor(s) + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm';
    if (s < 172800) return Math.floor(s / 3600) + 'h' + String(Math.floor(s / 60) % 60).padStart(2, '0') + 'm';
    return Math.floor(s / 86400) + 'd';
  };
  const memory = (r) => r.rss_kb > 0 ? Math.floor(r.rss_kb / 1024) + ' MB'
    : (r.state === 'paused' && r.freed_kb > 0 ? 'freed ' + Math.floor(r.freed_kb / 1024) + ' MB' : '–');
  const fields = {
    name: (r) => r.name, project: (r) => r.project, label: (r) => r.busy ? r.busy + '…' : r.label,
    for: (r) => ago(r.since), memory, context: (r) => r.context || '', summary: (r) => r.summary || '', error: (r) => r.attention || r.last_error || '',
    branch: (r) => r.branch ? r.branch + (r.dirty ? ' · ' + r.dirty + ' dirty' : '') : '',
    host: (r) => r.host && r.host !== 'local' ? r.host : '',
  };

  const fill = (el, r) => {
    el.dataset.id = r.id; el.dataset.state = r.state; el.dataset.group = r.group; el.dataset.host = r.host || 'local';
    el.toggleAttribute('data-unreachable', !!r.unreachable);
    for (const f of el.querySelectorAll('[data-f]')) f.textContent = fields[f.dataset.f](r);
    el.querySelector('[data-f=for]').dataset.since = r.since;
    el.querySelector('a.name').href = '/agents/' + encodeURIComponent(r.id);
    el.querySelector('.pick').value = r.id;
    el.querySelector('[data-act=pause]').hidden = !r.can_pause;
    el.querySelector('[data-act=resume]').hidden = !r.can_resume;
  };
  const rowEl = (id) => document.querySelector('li.row[data-id="' + CSS.escape(id) + '"]');
  const upsert = (r) => {
    rows.set(r.id, r);
    let el = rowEl(r.id);
    if (body.dataset.page === 'agent') {
      if (r.id !== agentID || !el) return;
      fill(el, r);
      document.getElementById('send-box').hidden = !(r.state === 'active' && r.activity === 'idle');
      document.getElementById('resume-box').hidden = !r.can_resume;
      return;
    }
    if (body.dataset.page !== 'agents') return;
    if (!el) el = document.getElementById('row-tpl').content.firstElementChild.cloneNode(true);
    fill(el, r);
    const list = document.querySelector('section[data-group="' + r.group + '"] ul');
    if (el.parentElement !== list) list.appendChild(el);
  };
  const remove = (id) => { rows.delete(id); const el = rowEl(id); if (el && body.dataset.page === 'agents') el.remove(); };
  const recount = () => {
    let n = 0;
    for (const r of rows.values()) if (r.group === 'needs_input') n++;
    document.title = (n ? '(' + n + ') ' : '') + body.dataset.title;
    for (const sec of document.querySelectorAll('section.group')) {
      const k = sec.querySelectorAll('li.row').length;
      sec.querySelector('.count').textContent = k;
      sec.hidden = k === 0;
    }
    const empty = document.querySelector('.empty-all');
    if (empty) empty.hidden = rows.size > 0;
  };

  const notify = (title, text) => {
    if (window.Notification && Notification.permission === 'granted' && document.hidden) new Notification(title, { body: text });
  };
  const es = new EventSource('/events' + (agentID ? '?screen=' + encodeURIComponent(agentID) : ''));
  const live = document.getElementById('live');
  es.onopen = () => { live.textContent = 'live'; live.className = 'live on'; };
  es.onerror = () => { live.textContent = 'reconnecting'; live.className = 'live'; };
  es.addEventListener('snapshot', (e) => {
    const d = JSON.parse(e.data);
    const ids = new Set(d.agents.map((r) => r.id));
    for (const id of [...rows.keys()]) if (!ids.has(id)) remove(id);
    for (const el of document.querySelectorAll('main li.row')) if (!ids.has(el.dataset.id)) el.remove();
    for (const r of d.agents) upsert(r);
    recount();
  });
  for (const name of ['agent.created', 'agent.state', 'agent.needs_input', 'agent.paused', 'agent.resumed', 'agent.exited', 'agent.lost', 'agent.failed', 'agent.attention']) {
    es.addEventListener(name, (e) => {
      const d = JSON.parse(e.data);
      if (d.row) upsert(d.row);
      recount();
      if (name === 'agent.needs_input') notify(d.row.name + ' needs input', d.summary || d.kind || '');
      if (name === 'agent.exited') notify(d.row.name + ' exited', d.reason || '');
      if (name === 'agent.attention') notify(d.row.name + ' needs attention', d.why || '');
    });
  }
  es.addEventListener('agent.removed', (e) => { remove(JSON.parse(e.data).id); recount(); });
  es.addEventListener('project.saved', (e) => {
    const d = JSON.parse(e.data);
    say((d.name || d.project || 'the workspace') + ' saved (' + d.trigger + ')');
  });
  es.addEventListener('agent.op_failed', (e) => { const d = JSON.parse(e.data); say(d.op + ' ' + d.id + ': ' + d.error, true); });
  es.addEventListener('agent.screen', (e) => {
    const d = JSON.parse(e.data);
    if (d.id === agentID) document.getElementById('screen').textContent = d.text;
  });
  window.addEventListener('pagehide', () => es.close());

  const act = async (what, id, data) => {
    try {
      if (what === 'delete') {
        if (!confirm('Delete agent ' + id + '? Its transcript and checkpoints stay.')) return;
        await api('DELETE', '/api/agents/' + encodeURIComponent(id));
        say('deleted ' + id);
        if (body.dataset.page === 'agent') location.href = '/';
      } else {
        await api('POST', '/api/agents/' + encodeURIComponent(id) + '/' + what, data || {});
        say(what === 'send' ? 'sent' : what + ' of ' + id + ' started');
      }
    } catch (err) { say(err.message, true); }
  };
  document.addEventListener('click', async (e) => {
    const b = e.target.closest('button[data-act], button[data-bulk]');
    if (!b) return;
    if (b.dataset.act) return act(b.dataset.act, b.closest('li.row').dataset.id);
    const ids = [...document.querySelectorAll('.pick:checked')].map((c) => c.value);
    if (!ids.length) return say('select agents first', true);
    try {
      const res = await api('POST', '/api/agents/' + b.dataset.bulk, { ids });
      const refused = Object.entries(res.refused);
      say(b.dataset.bulk + ': ' + res.accepted.length + ' started' + (refused.length ? '; refused ' + refused.map(([k, v]) => k + ' (' + v + ')').join(', ') : ''), refused.length > 0);
      for (const c of document.querySelectorAll('.pick:checked')) c.checked = false;
    } catch (err) { say(err.message, true); }
  });
  document.addEventListener('submit', async (e) => {
    const f = e.target;
    e.preventDefault();
    const data = Object.fromEntries(new FormData(f));
    if (f.id === 'send') { await act('send', f.dataset.id, { text: data.text }); f.reset(); }
    if (f.id === 'resume') await act('resume', f.dataset.id, { prompt: data.prompt });
    if (f.id === 'start') {
      try { const rec = await api('POST', '/api/agents', data); location.href = '/agents/' + encodeURIComponent(rec.id); } catch (err) { say(err.message, true); }
    }
  });

  const nb = document.getElementById('notify');
  if (window.Notification && Notification.permission === 'default') {
    nb.hidden = false;
    nb.addEventListener('click', () => Notification.requestPermission().then(() => { nb.hidden = true; }));
  }
  setInterval(() => { for (const r of rows.values()) { const el = rowEl(r.id); if (el) el.querySelector('[data-f=for]').textContent = ago(r.since); } }, 10000);
})();
