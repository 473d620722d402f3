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
  const since = (r) => { const a = ago(r.since); return a ? 'for ' + a : ''; };
  const fields = {
    name: (r) => r.name, project: (r) => r.project, label: (r) => r.busy ? r.busy + '…' : r.label,
    for: since, memory: (r) => r.memory || '', context: (r) => r.context ? 'context ' + r.context : '',
    summary: (r) => r.summary || '', error: (r) => r.attention || r.last_error || '',
    branch: (r) => r.branch ? 'branch ' + r.branch + (r.dirty ? ' · ' + r.dirty + ' dirty' : '') : '',
    host: (r) => r.host && r.host !== 'local' ? r.host : '',
    tokens: (r) => r.tokens_text || '',
    tool: (r) => r.tool || '', input: (r) => r.input || '', guard: (r) => r.guard_text || '', ask: () => null,
  };
  // What each agent's last action from this page was, to say when it is done.
  const pending = new Map();
  const nameOf = (id) => (rows.get(id) || {}).name || id;

  const fill = (el, r) => {
    el.dataset.id = r.id; el.dataset.state = r.state; el.dataset.group = r.group; el.dataset.host = r.host || 'local';
    el.toggleAttribute('data-unreachable', !!r.unreachable);
    for (const f of el.querySelectorAll('[data-f]')) { const v = fields[f.dataset.f](r); if (v !== null) f.textContent = v; }
    const ask = el.querySelector('[data-f=ask]');
    ask.hidden = !(r.group === 'needs_input' && r.detail === 'permission' && r.input);
    ask.dataset.at = r.activity_at;
    el.querySelector('.ask-guard').classList.toggle('bad', !!r.guard && r.guard !== 'ok');
    el.querySelector('[data-f=for]').dataset.since = r.since;
    el.querySelector('[data-f=tokens]').title = r.tokens_title || '';
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
      document.getElementById('resume-box').hidden = !r.can_resume;
      term.running(r);
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

  // The terminal: the pane's lines of styled spans (internal/screen), drawn as text,
  // following the newest line unless the reader scrolled up.
  const term = (() => {
    const attr = { 1: 'b', 2: 'd', 4: 'i', 8: 'u', 16: 'v', 32: 'h', 64: 's' };
    const rule = /^[\s\u2500-\u257f]+$/;
    let keys = false;
    const draw = (id, lines) => {
      const pre = document.querySelector('pre.term[data-id="' + CSS.escape(id) + '"]') || (id === agentID ? document.getElementById('screen') : null);
      if (!pre) return;
      const atEnd = !pre.dataset.drawn || pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 24;
      const frag = document.createDocumentFragment();
      while (lines.length && !(lines[lines.length - 1] || []).some((s) => s.t.trim() !== '' || s.b)) lines.pop();
      for (const spans of lines) {
        const line = document.createElement('div');
        line.className = 'ln';
        let plain = '';
        for (const s of spans || []) {
          plain += s.t;
          if (!s.f && !s.b && !s.a) { line.append(s.t); continue; }
          const el = document.createElement('span');
          el.textContent = s.t;
          let fg = s.f, bg = s.b;
          if (s.a & 16) { fg = s.b || 'var(--term-bg)'; bg = s.f || 'var(--term-fg)'; }
          if (fg) el.style.color = fg;
          if (bg) el.style.backgroundColor = bg;
          for (const [bit, cls] of Object.entries(attr)) if (s.a & bit) el.classList.add(cls);
          line.append(el);
        }
        if (plain !== '' && rule.test(plain)) line.classList.add('rule');
        if (plain === '') line.append('\n');
        frag.append(line);
      }
      pre.replaceChildren(frag);
      pre.dataset.drawn = '1';
      if (atEnd) pre.scrollTop = pre.scrollHeight;
      const st = document.getElementById('term-state');
      if (st && id === agentID && (rows.get(id) || {}).state === 'active') st.textContent = 'live';
    };
    const type = async (list) => {
      if (!list.length) return;
      try { await api('POST', '/api/agents/' + encodeURIComponent(agentID) + '/keys', { keys: list }); } catch (err) { say(err.message, true); }
    };
    // Keys typed in the focused terminal go out in small batches, in order.
    let queue = [], timer = null, chain = Promise.resolve();
    const push = (k) => {
      const last = queue[queue.length - 1];
      if (k.text !== undefined && last && last.text !== undefined) last.text += k.text; else queue.push(k);
      clearTimeout(timer);
      timer = setTimeout(() => { const batch = queue; queue = []; chain = chain.then(() => type(batch)); }, 25);
    };
    const named = { Enter: 1, Escape: 1, Tab: 1, Backspace: 1, Delete: 1, ArrowUp: 1, ArrowDown: 1, ArrowLeft: 1, ArrowRight: 1, Home: 1, End: 1, PageUp: 1, PageDown: 1 };
    const screen = document.getElementById('screen');
    if (screen && agentID) {
      screen.addEventListener('keydown', (e) => {
        if (!keys || e.metaKey || e.altKey) return;
        if (e.ctrlKey && /^[a-z]$/i.test(e.key)) { if (e.key.toLowerCase() === 'c' && String(getSelection()) !== '') return; push({ key: 'C-' + e.key.toLowerCase() }); }
        else if (e.key === 'Tab' && e.shiftKey) push({ key: 'BTab' });
        else if (named[e.key]) push({ key: e.key });
        else if (e.key.length === 1 && !e.ctrlKey) push({ text: e.key });
        else return;
        e.preventDefault();
      });
      screen.addEventListener('paste', (e) => {
        if (!keys) return;
        e.preventDefault();
        // Control characters (a tab, a newline) are not typed: they become spaces.
        const text = e.clipboardData.getData('text').replace(/[\x00-\x1f\x7f]+/g, ' ');
        if (text) push({ text });
      });
    }
    const toggle = (btn, on) => { btn.setAttribute('aria-pressed', String(on)); btn.classList.toggle('on', on); };
    const kb = document.getElementById('term-keys');
    if (kb) kb.addEventListener('click', () => {
      keys = !keys;
      toggle(kb, keys);
      kb.textContent = keys ? 'Typing: on' : 'Type into it';
      document.getElementById('keybar').hidden = !keys;
      screen.classList.toggle('typing', keys);
      if (keys) screen.focus();
    });
    const wrap = document.getElementById('term-wrap');
    if (wrap) wrap.addEventListener('click', () => { const on = !screen.classList.contains('wrap'); screen.classList.toggle('wrap', on); toggle(wrap, on); });
    const copy = document.getElementById('term-copy');
    if (copy) copy.addEventListener('click', async () => {
      const sel = String(getSelection());
      const text = sel && screen.contains(getSelection().anchorNode) ? sel : [...screen.querySelectorAll('.ln')].map((l) => l.textContent.replace(/\s+$/, '')).join('\n') || screen.textContent;
      try { await navigator.clipboard.writeText(text); say('copied ' + text.split('\n').length + ' lines'); } catch (err) {
        const r = document.createRange(); r.selectNodeContents(screen); getSelection().removeAllRanges(); getSelection().addRange(r);
        say('selected: press Ctrl-C to copy');
      }
    });
    document.addEventListener('click', (e) => { const b = e.target.closest('button[data-key]'); if (b) push({ key: b.dataset.key }); });
    const running = (r) => {
      if (!kb) return;
      const live = r.state === 'active' && (r.host || 'local') === 'local';
      kb.disabled = !live;
      if (!live && keys) kb.click();
      const st = document.getElementById('term-state');
      if (st && !live) st.textContent = r.state === 'paused' ? 'the screen as the pause left it' : r.state;
    };
    return { draw, type, running };
  })();

  const notify = (title, text) => {
    if (window.Notification && Notification.permission === 'granted' && document.hidden) new Notification(title, { body: text });
  };
  const watching = agentID ? [agentID] : [...document.querySelectorAll('pre.term[data-id]')].map((p) => p.dataset.id);
  const es = new EventSource('/events' + (watching.length ? '?' + watching.map((id) => 'screen=' + encodeURIComponent(id)).join('&') : ''));
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
      const was = pending.get(d.id);
      if (was && ((was === 'pause' && name === 'agent.paused') || (was === 'resume' && name === 'agent.resumed'))) {
        pending.delete(d.id);
        say(d.row.name + (was === 'pause' ? ' paused' : ' resumed'));
      }
      if (name === 'agent.needs_input') notify(d.row.name + (d.kind === 'permission' ? ' asks to run ' + (d.tool || 'a tool') : ' needs input'), d.summary || d.kind || '');
      if (name === 'agent.exited') notify(d.row.name + ' exited', d.reason || '');
      if (name === 'agent.attention') notify(d.row.name + ' needs attention', d.why || '');
    });
  }
  es.addEventListener('agent.removed', (e) => { remove(JSON.parse(e.data).id); recount(); });
  es.addEventListener('project.saved', (e) => {
    const d = JSON.parse(e.data);
    say((d.name || d.project || 'the workspace') + ' saved (' + d.trigger + ')');
  });
  es.addEventListener('agent.op_failed', (e) => { const d = JSON.parse(e.data); pending.delete(d.id); say(d.op + ' of ' + nameOf(d.id) + ' failed: ' + d.error, true); });
  es.addEventListener('agent.screen', (e) => { const d = JSON.parse(e.data); term.draw(d.id, d.lines); });
  window.addEventListener('pagehide', () => es.close());

  const act = async (what, id, data) => {
    try {
      if (what === 'delete') {
        if (!confirm('Delete agent ' + id + '? Its transcript and checkpoints stay.')) return;
        await api('DELETE', '/api/agents/' + encodeURIComponent(id));
        say(nameOf(id) + ' deleted');
        if (body.dataset.page === 'agent') location.href = '/';
      } else if (what === 'allow' || what === 'deny') {
        const at = rowEl(id).querySelector('[data-f=ask]').dataset.at;
        await api('POST', '/api/agents/' + encodeURIComponent(id) + '/permission', { allow: what === 'allow', at });
        say((what === 'allow' ? 'Allowed once: ' : 'Denied: ') + nameOf(id) + ' ' + ((rows.get(id) || {}).tool || ''));
      } else {
        await api('POST', '/api/agents/' + encodeURIComponent(id) + '/' + what, data || {});
        pending.set(id, what);
        say(what === 'pause' ? 'pausing ' + nameOf(id) + '…' : 'resuming ' + nameOf(id) + '…');
      }
    } catch (err) { say(err.message, true); }
  };
  document.addEventListener('click', async (e) => {
    const m = e.target.closest('button[data-merge]');
    if (m) {
      const squash = m.dataset.merge === 'squash';
      try {
        const res = await api('POST', '/api/agents/' + encodeURIComponent(agentID) + '/merge', { squash });
        sessionStorage.setItem('ctx-flash', 'merged ' + res.branch + ' into ' + res.into + ' (' + res.how + ', ' + res.commit.slice(0, 7) + ')');
        location.reload();
      } catch (err) { say(err.message, true); }
      return;
    }
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
    if (f.id === 'term-line') { await term.type([{ text: data.text }, { key: 'Enter' }].filter((k) => k.text !== '')); f.reset(); }
    if (f.id === 'resume') await act('resume', f.dataset.id, { prompt: data.prompt });
    if (f.id === 'start') {
      try { const rec = await api('POST', '/api/agents', data); location.href = '/agents/' + encodeURIComponent(rec.id); } catch (err) { say(err.message, true); }
    }
  });

  const kept = sessionStorage.getItem('ctx-flash');
  if (kept) { sessionStorage.removeItem('ctx-flash'); say(kept); }
  const nb = document.getElementById('notify');
  if (window.Notification && Notification.permission === 'default') {
    nb.hidden = false;
    nb.addEventListener('click', () => Notification.requestPermission().then(() => { nb.hidden = true; }));
  }
  setInterval(() => { for (const r of rows.values()) { const el = rowEl(r.id); if (el) el.querySelector('[data-f=for]').textContent = since(r); } }, 10000);
})();
