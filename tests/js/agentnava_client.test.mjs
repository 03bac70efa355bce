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

test('the agent has exactly the document\'s methods', () => {
  const agent = client().agent(agentId);
  assert.deepEqual(Object.keys(agent).sort(), ['endUser', 'get', 'memories', 'start', 'update']);
  const ananya = agent.endUser('u_ananya');
  assert.deepEqual(Object.keys(ananya).sort(), ['erase', 'id', 'memory']);
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

  // delete: gone
  await run(DELETE, { ananya });
  await rejectsWith(ananya.memory.get(), 'memory_not_found');
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
  await rejectsWith(endUser.memory.get(), 'memory_not_found');
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
