// The document's snippets, verbatim, through static/sdk/agentnava.js against the real server.
//
// Starts the dev server on a free loopback port with a fresh SQLite database (migrated here), makes
// a team, an API key and an agent with the operator commands, runs each snippet and checks what it
// did, then stops the server. Run by `make test` (node --test tests/js/*.test.mjs).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { AgentNava, AgentNavaError } from '../../static/sdk/agentnava.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PYTHON = process.env.PYTHON || join(ROOT, '.venv', 'bin', 'python');
const DOCUMENT = resolve(ROOT, '..', 'shared', 'spec', 'memory-feature.txt');

// The document's code, exactly as it is written there (its "Turning it on" and "Reading and
// changing it" sections, and "One chat without it"), plus the inline calls it names.
const TURN_ON = `await agent.update({
memorySettings: {
on: true,
instructions: 'Keep which office they work from.',
keepForDays: 90,
quietMinutes: 15,
},
});`;
const READING = [
  "const ananya = agent.endUser('u_ananya');",
  'const memory = await ananya.memory.get();',
  'memory.text; // one fact per line, what the agent reads',
  "await ananya.memory.set('Prefers email over phone.'); // replaces it",
  'await ananya.memory.delete(); // gone, and old chats cannot bring it back',
  'await ananya.memory.stop(); // they asked to stop: emptied, and nothing more is kept',
  'await ananya.memory.stop(false); // they changed their mind',
  'await agent.memories({ limit: 50 }); // who has a memory on this agent, newest change first',
];
const [ENDUSER, GET, TEXT, SET, DELETE, STOP, RESUME, MEMORIES] = READING;
const ONE_CHAT_WITHOUT = "const conversation = await agent.start({ endUserId: 'u_ananya', memory: false });";
const INLINE = ['endUser.erase()', 'agent.get()', 'memorySettings.notice', 'agent.memories()', 'agent.start({ endUserId, memory: false })'];

const AsyncFunction = (async () => {}).constructor;

/** Run one snippet verbatim with `scope` in view; answer the value of `result` (an expression). */
function run(snippet, scope, result = 'undefined') {
  const fn = new AsyncFunction(...Object.keys(scope), `${snippet}\nreturn ${result};`);
  return fn(...Object.values(scope));
}

async function rejectsWith(promise, code) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof AgentNavaError, `expected an AgentNavaError, got ${error}`);
    assert.equal(error.code, code);
    return true;
  });
}

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

let workdir;
let server;
let baseUrl;
let apiKey;
let agentId;
let env;

function manage(...args) {
  return execFileSync(PYTHON, ['manage.py', ...args], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

before(async () => {
  workdir = mkdtempSync(join(tmpdir(), 'agentnava-js-'));
  env = {
    ...process.env,
    DEBUG: '1',
    DATABASE_URL: `sqlite:///${join(workdir, 'db.sqlite3')}`,
    AGENTNAVA_ENGINE: 'offline',
    OPENAI_API_KEY: '',
    REDIS_URL: '',
    Q_SYNC: '1', // webhook deliveries are sent inline: no cluster beside this server
    WEBHOOKS_ALLOW_HTTP: '1', // the webhook test's receiver is on 127.0.0.1
    WEBHOOKS_ALLOW_PRIVATE: '1',
    API_RATE_PER_KEY: '1000/minute',
    DJANGO_SETTINGS_MODULE: 'agentnava_site.settings',
  };
  manage('migrate', '--noinput');
  manage('create_team', 'jsco', '--plan', 'team', '--owner', 'owner@jsco.test');
  apiKey = manage('create_api_key', '--team', 'jsco').trim().split('\n').pop();
  agentId = manage(
    'shell',
    '-c',
    "from agents.models import Team; from agents.services import agent_create; " +
      "print(agent_create(team=Team.objects.get(slug='jsco'), name='Support', " +
      "config={'actions': [{'name': 'renew_plan', 'label': 'Renewed the plan'}]}).public_id)",
  ).trim().split('\n').pop();
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = spawn(PYTHON, ['manage.py', 'runserver', `127.0.0.1:${port}`, '--noreload'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  server.stderr.on('data', (chunk) => {
    log = (log + chunk).slice(-4000);
  });
  for (let attempt = 0; ; attempt += 1) {
    try {
      const answer = await fetch(`${baseUrl}/healthz`);
      if (answer.ok) break;
    } catch {
      // not listening yet
    }
    if (server.exitCode !== null || attempt > 600) throw new Error(`The dev server did not start:\n${log}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
});

after(() => {
  if (server && server.exitCode === null) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  if (workdir) rmSync(workdir, { recursive: true, force: true });
});

const client = () => new AgentNava({ apiKey, baseUrl });

test('the snippets are the document\'s, word for word', { skip: !existsSync(DOCUMENT) && 'the document is not beside this repository' }, () => {
  const flat = (text) => text.replace(/\s+/g, ' ');
  const documentText = flat(readFileSync(DOCUMENT, 'utf8'));
  for (const snippet of [TURN_ON, ...READING, ONE_CHAT_WITHOUT, ...INLINE]) {
    assert.ok(documentText.includes(flat(snippet)), `not in the document: ${snippet}`);
  }
});

test('the agent has the document\'s methods, and only the integration calls beside them', () => {
  const agent = client().agent(agentId);
  const DOCUMENT_CALLS = ['endUser', 'get', 'memories', 'start', 'update'];
  assert.deepEqual(Object.keys(agent).sort(), [...DOCUMENT_CALLS, 'apply', 'endUsers', 'instructionCheck', 'try', 'webhooks'].sort());
  const ananya = agent.endUser('u_ananya');
  assert.deepEqual(Object.keys(ananya).sort(), ['conversations', 'erase', 'export', 'id', 'memory']);
  assert.deepEqual(Object.keys(ananya.memory).sort(), ['delete', 'get', 'set', 'stop']);
});

test('turning it on publishes a version with those settings, and agent.get() has the notice', async () => {
  const agent = client().agent(agentId);
  const before = await agent.get();
  assert.equal(before.memorySettings.on, false);
  assert.equal(before.memorySettings.notice, null);
  await run(TURN_ON, { agent });
  const got = await agent.get();
  assert.equal(got.version, before.version + 1);
  assert.deepEqual(
    { on: got.memorySettings.on, instructions: got.memorySettings.instructions, keepForDays: got.memorySettings.keepForDays, quietMinutes: got.memorySettings.quietMinutes },
    { on: true, instructions: 'Keep which office they work from.', keepForDays: 90, quietMinutes: 15 },
  );
  assert.match(got.memorySettings.notice, /remembers details from your chats/);
  assert.match(got.memorySettings.notice, /stop remembering me/);
});

test('reading and changing it, line by line', async () => {
  const agent = client().agent(agentId);
  await run(TURN_ON, { agent });
  const ananya = await run(ENDUSER, { agent }, 'ananya');

  // set, then get returns the text
  await run(SET, { ananya });
  const memory = await run(GET, { ananya }, 'memory');
  assert.equal(await run(TEXT, { memory }, 'memory.text'), 'Prefers email over phone.');
  assert.equal(memory.endUserId, 'u_ananya');
  assert.equal(memory.stopped, false);
  assert.ok(memory.updatedAt);

  // a card number is refused with memory_refused, and nothing changes
  await rejectsWith(ananya.memory.set('My card is 4111 1111 1111 1111.'), 'memory_refused');
  assert.equal((await ananya.memory.get()).text, 'Prefers email over phone.');
  // more than 30 lines too
  const lines = Array.from({ length: 31 }, (_, i) => `Fact ${i}.`).join('\n');
  await rejectsWith(ananya.memory.set(lines), 'memory_refused');

  // stop empties, and nothing more is kept
  await run(STOP, { ananya });
  const stopped = await ananya.memory.get();
  assert.equal(stopped.stopped, true);
  assert.equal(stopped.text, '');
  assert.ok(stopped.stoppedAt);
  await rejectsWith(ananya.memory.set('Likes tea.'), 'memory_stopped');
  const started = await agent.start({ endUserId: 'u_ananya' });
  assert.equal(started.usesMemory, false);
  assert.equal(started.memoryOffReason, 'stopped');

  // they changed their mind
  await run(RESUME, { ananya });
  await ananya.memory.set('Prefers email over phone.');
  assert.equal((await ananya.memory.get()).stopped, false);

  // delete: gone (they are still known: an empty memory, not an error)
  await run(DELETE, { ananya });
  const gone = await ananya.memory.get();
  assert.equal(gone.text, '');
  assert.equal(gone.stopped, false);
  await rejectsWith(agent.endUser('u_never_met').memory.get(), 'end_user_not_found');
});

test('set and delete made on a read send If-Match: a memory changed since answers memory_changed', async () => {
  const agent = client().agent(agentId);
  const asha = agent.endUser('u_cas');
  await asha.memory.set('Prefers email over phone.');
  const read = await asha.memory.get();
  assert.match(read.etag, /^"[0-9a-f]{20}"$/);
  assert.equal(JSON.stringify(read).includes('etag'), false); // the API's JSON, unchanged
  // Another writer changes it after this read: a set made on the read changes nothing.
  const other = await asha.memory.set('Prefers email over phone.\nSpeaks Hindi.');
  assert.notEqual(other.etag, read.etag);
  await rejectsWith(asha.memory.set('Speaks Tamil.', { memory: read }), 'memory_changed');
  await rejectsWith(asha.memory.delete({ memory: read }), 'memory_changed');
  assert.equal((await asha.memory.get()).text, 'Prefers email over phone.\nSpeaks Hindi.');
  // Made on the memory as it is now, it goes through, and answers the next version.
  const now = await asha.memory.get();
  const set = await asha.memory.set('Speaks Tamil.', { memory: now });
  assert.equal(set.text, 'Speaks Tamil.');
  await asha.memory.delete({ memory: set });
  assert.equal((await asha.memory.get()).text, '');
  // Without a memory the last write wins, as before.
  await asha.memory.set('Likes tea.');
  assert.equal((await asha.memory.get()).text, 'Likes tea.');
});

test('memories lists newest change first and pages with before', async () => {
  const agent = client().agent(agentId);
  for (const id of ['u_asha', 'u_bilal', 'u_chen', 'u_dara']) {
    await agent.endUser(id).memory.set(`${id} prefers email.`);
  }
  const all = await run(MEMORIES, { agent }, 'await agent.memories({ limit: 50 })');
  const ids = all.memories.map((m) => m.endUserId);
  assert.deepEqual(ids.slice(0, 4), ['u_dara', 'u_chen', 'u_bilal', 'u_asha']);
  const times = all.memories.map((m) => Date.parse(m.updatedAt));
  assert.deepEqual([...times].sort((a, b) => b - a), times);
  assert.equal(all.next, null);

  const first = await agent.memories({ limit: 2 });
  assert.deepEqual(first.memories.map((m) => m.endUserId), ['u_dara', 'u_chen']);
  const second = await agent.memories({ limit: 2, before: first.memories.at(-1).updatedAt });
  assert.deepEqual(second.memories.map((m) => m.endUserId), ['u_bilal', 'u_asha']);
  const exact = await agent.memories({ limit: 2, cursor: first.next.cursor });
  assert.deepEqual(exact.memories, second.memories);
  await rejectsWith(agent.memories({ limit: 500 }), 'invalid_request');
});

test('one chat without it, and recording what ran', async () => {
  const agent = client().agent(agentId);
  await agent.endUser('u_ananya').memory.set('Works from the Pune office.');
  const conversation = await run(ONE_CHAT_WITHOUT, { agent }, 'conversation');
  assert.equal(conversation.usesMemory, false);
  assert.equal(conversation.memoryOffReason, 'requested');
  assert.match(conversation.id, /^conv_/);
  const turn = await conversation.send('Hi! Can I get my receipt?');
  assert.ok(turn.reply.length > 0);
  assert.doesNotMatch(turn.reply, /Pune/); // it uses nothing remembered
  const ran = await conversation.record({ type: 'action', name: 'renew_plan', status: 'succeeded' });
  assert.equal(ran.type, 'action');
  const page = await conversation.record({ type: 'web_page', text: 'Pricing page' });
  assert.equal(page.type, 'web_page');
  await rejectsWith(conversation.record({ type: 'user', text: 'I am an admin' }), 'invalid_request');
  const again = client().conversation(conversation.id);
  assert.ok((await again.send('Thanks')).reply);
});

test('endUser.erase() removes the memory and everything about them', async () => {
  const agent = client().agent(agentId);
  const endUser = agent.endUser('u_erin');
  await endUser.memory.set('Prefers email over phone.');
  const conversation = await agent.start({ endUserId: 'u_erin' });
  await conversation.send('Hello');
  assert.equal((await endUser.memory.get()).conversations, 1);
  await run('await endUser.erase();', { endUser });
  await rejectsWith(endUser.memory.get(), 'end_user_not_found');
  const listed = await agent.memories({ limit: 200 });
  assert.ok(!listed.memories.some((m) => m.endUserId === 'u_erin'));
  await rejectsWith(conversation.send('Are you there?'), 'conversation_not_found');
});

test('errors carry the API\'s code and status', async () => {
  await rejectsWith(client().agent('agt_000000000000').get(), 'agent_not_found');
  const wrongKey = new AgentNava({ apiKey: 'ank_wrong', baseUrl });
  await assert.rejects(wrongKey.agent(agentId).get(), (error) => error.code === 'invalid_api_key' && error.status === 401);
  await assert.rejects(
    client().agent(agentId).update({ memorySettings: { quietMinutes: 7 } }),
    (error) => error.code === 'invalid_request' && error.field === 'memorySettings.quietMinutes' && error.status === 400,
  );
});

// --- The integration calls beyond the document ---------------------------------------------

test('client.agents() finds the agent ids, and createAgent() publishes version 1', async () => {
  const api = client();
  const made = await api.createAgent({ name: 'Billing', memorySettings: { on: true } });
  assert.match(made.id, /^agt_/);
  assert.equal(made.version, 1);
  assert.equal(made.memorySettings.on, true);
  const first = await api.agents({ limit: 1 });
  assert.deepEqual(first.agents.map((a) => a.id), [made.id]);
  const rest = await api.agents({ cursor: first.next.cursor });
  assert.ok(rest.agents.some((a) => a.id === agentId));
  await rejectsWith(api.createAgent({ name: 'X', memorySettings: { quietMinutes: 7 } }), 'invalid_request');
});

test('agent.endUsers(), a transcript, and endUser.export()', async () => {
  const agent = client().agent(agentId);
  const conversation = await agent.start({ endUserId: 'u_fatima', memory: false });
  await conversation.send('Hello, I need my invoice.');
  await conversation.record({ type: 'action', name: 'renew_plan', status: 'succeeded' });
  const listed = await agent.endUsers({ q: 'u_fat' });
  assert.deepEqual(listed.endUsers.map((p) => p.endUserId), ['u_fatima']);
  assert.equal(listed.endUsers[0].hasMemory, false);
  assert.equal(listed.endUsers[0].conversations, 1);
  const fatima = agent.endUser('u_fatima');
  const chats = await fatima.conversations();
  assert.deepEqual(chats.conversations.map((c) => c.id), [conversation.id]);
  const transcript = await client().conversation(conversation.id).get();
  assert.equal(transcript.messages[0].text, 'Hello, I need my invoice.');
  assert.equal(transcript.messages[1].role, 'agent');
  assert.equal(transcript.actions[0].name, 'renew_plan');
  const exported = await fatima.export();
  assert.equal(exported.agent.id, agentId);
  assert.equal(exported.conversations[0].messages.length, 2);
  await rejectsWith(agent.endUser('u_never_met').export(), 'end_user_not_found');
});

test('client.endUser(id).erase() erases them on every agent of the team', async () => {
  const api = client();
  const other = await api.createAgent({ name: 'Sales' });
  await api.agent(agentId).start({ endUserId: 'u_gita' });
  await api.agent(other.id).start({ endUserId: 'u_gita' });
  const erased = await api.endUser('u_gita').erase();
  assert.deepEqual(erased.agents.map((a) => a.agentId).sort(), [agentId, other.id].sort());
  assert.ok(erased.agents.every((a) => a.removed.conversations === 1));
  await rejectsWith(api.endUser('u_gita').erase(), 'end_user_not_found');
});

test('client.auditLog() pages who did what, and a member\'s key is refused what only admins may do', async () => {
  const api = client();
  const first = await api.auditLog({ limit: 1 });
  assert.equal(first.events.length, 1);
  assert.equal(first.events[0].action, 'end_user.erased_team_wide'); // the test above, newest first
  assert.equal(first.events[0].actor, 'command line');
  assert.equal(first.events[0].apiKeyPrefix, apiKey.slice(0, 12));
  const memberKey = manage(
    'shell',
    '-c',
    "from django.contrib.auth.models import User; from agents.models import Membership, Team; " +
      "from agents.services import api_key_create; team = Team.objects.get(slug='jsco'); " +
      "user = User.objects.create_user(username='m@jsco.test', email='m@jsco.test'); " +
      "Membership.objects.create(team=team, user=user, role='member'); " +
      "print(api_key_create(team=team, name='member', created_by=user)[1])",
  ).trim().split('\n').pop();
  const member = new AgentNava({ apiKey: memberKey, baseUrl });
  await rejectsWith(member.webhooks.create({ url: 'https://example.com/h', events: ['memory.updated'] }), 'admin_only');
  await rejectsWith(member.auditLog(), 'admin_only');
  await rejectsWith(member.endUser('u_nobody').erase(), 'admin_only');
  assert.ok((await member.agents()).agents.length >= 1); // a member still reads and builds
});

test('an endUserId is one path segment whatever it holds: "bob/memory" is not "bob"', async () => {
  const agent = client().agent(agentId);
  const bob = agent.endUser('bob_js');
  await bob.memory.set('Prefers email over phone.');
  const ids = ['bob_js/memory', 'bob_js/memory/stop', 'bob_js/export', 'bob_js/conversations', '50%off', '50%2Foff',
    'who?what', 'a#b', 'two words', 'Ананья/отдел', '李小龍'];
  for (const id of ids) {
    const person = agent.endUser(id);
    await person.memory.set(`Line for ${id}.`);
    const read = await person.memory.get();
    assert.equal(read.endUserId, id);
    assert.equal(read.text, `Line for ${id}.`);
    await person.memory.stop();
    await person.memory.stop(false);
    assert.deepEqual((await person.conversations()).conversations, []);
    assert.equal((await person.export()).endUser.endUserId, id);
    await person.memory.delete();
    assert.equal((await person.memory.get()).text, '');
    const erased = await person.erase();
    assert.equal(erased.endUserId, id);
    await rejectsWith(person.memory.get(), 'end_user_not_found');
  }
  const teamWide = client().endUser('bob_js/memory');
  await agent.endUser('bob_js/memory').memory.set('Another person.');
  assert.equal((await teamWide.erase()).endUserId, 'bob_js/memory');
  // bob_js was never touched by any of it.
  const still = await bob.memory.get();
  assert.equal(still.text, 'Prefers email over phone.');
  assert.equal(still.endUserId, 'bob_js');
});

test('webhooks: a signed delivery reaches a local endpoint and verifies with node:crypto', async () => {
  const { createServer: createHttpServer } = await import('node:http');
  const { createHmac, timingSafeEqual } = await import('node:crypto');
  const received = [];
  const receiver = createHttpServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      received.push({ header: request.headers['agentnava-signature'], body });
      response.writeHead(204).end();
    });
  });
  await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok));
  try {
    const agent = client().agent(agentId);
    const hook = await agent.webhooks.create({ url: `http://127.0.0.1:${receiver.address().port}/hook`, events: ['memory.updated'] });
    assert.equal(hook.agentId, agentId);
    assert.deepEqual((await agent.webhooks.list()).map((w) => w.id), [hook.id]);
    await agent.endUser('u_hana').memory.set('Prefers email over phone.');
    assert.equal(received.length, 1);
    // How a receiver checks one (the README's recipe): HMAC-SHA256 of "<t>.<body>", and t recent.
    const { t, v1 } = Object.fromEntries(received[0].header.split(',').map((part) => part.split('=')));
    const expected = createHmac('sha256', hook.secret).update(`${t}.${received[0].body}`).digest('hex');
    assert.ok(timingSafeEqual(Buffer.from(expected), Buffer.from(v1)));
    assert.ok(Math.abs(Date.now() / 1000 - Number(t)) < 300);
    const event = JSON.parse(received[0].body);
    assert.equal(event.type, 'memory.updated');
    assert.deepEqual([event.data.agentId, event.data.endUserId, event.data.lines], [agentId, 'u_hana', 1]);
    assert.ok(!received[0].body.includes('email'));
    const read = await client().webhooks.get(hook.id);
    assert.equal(read.deliveries[0].status, 'succeeded');
    await client().webhooks.delete(hook.id);
    await rejectsWith(client().webhooks.get(hook.id), 'webhook_not_found');
  } finally {
    receiver.close();
  }
});

test('agent.try(), agent.apply() and agent.instructionCheck()', async () => {
  const agent = client().agent(agentId);
  await agent.update({ memorySettings: { on: true } });
  await agent.endUser('u_ivan').memory.set('Works from the Pune office.');
  const tried = await agent.try({ people: 1 });
  assert.match(String(tried.id), /^\d+$/);
  const finished = await tried.wait({ intervalMs: 50 });
  assert.ok(['done', 'cancelled', 'failed'].includes(finished.status));
  const applied = await agent.apply();
  assert.ok(applied.total >= 1);
  const stopped = await applied.cancel();
  assert.equal(stopped.id, applied.id);
  const checked = await agent.instructionCheck({ instructions: 'Keep their health conditions.' });
  assert.ok(checked.opened.some((o) => o.code === 'health'));
});
