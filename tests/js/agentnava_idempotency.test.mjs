// static/sdk/agentnava.js puts an Idempotency-Key on every write it sends (a new UUID each call, or the
// caller's own through request(..., { idempotencyKey })), and none on a read. A fetch of the test's
// own records what goes out; the server's side of a repeat is tested in tests/surfaces/test_idempotency.py
// and, through the Python client, in tests/clients/test_python_client.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { AgentNava } from '../../static/sdk/agentnava.js';

function recorder() {
  const sent = [];
  const fetch = async (url, init) => {
    sent.push({ url, method: init.method, key: init.headers['Idempotency-Key'] });
    const body = init.method === 'DELETE' ? null : JSON.stringify({ id: 'conv_1', endUserId: 'u_1', text: '' });
    return new Response(body, { status: init.method === 'DELETE' ? 204 : 200, headers: { 'Content-Type': 'application/json' } });
  };
  return { sent, client: new AgentNava({ apiKey: 'ank_test', baseUrl: 'http://agentnava.test', fetch }) };
}

test('every write carries its own key, and a read none', async () => {
  const { sent, client } = recorder();
  const agent = client.agent('agt_1');
  await agent.get();
  await agent.start({ endUserId: 'u_1' });
  await agent.start({ endUserId: 'u_1' });
  await agent.endUser('u_1').memory.set('Likes tea.');
  await agent.endUser('u_1').memory.delete();
  await agent.update({ instructions: 'Be brief.' });
  assert.deepEqual(sent.map((s) => s.method), ['GET', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH']);
  assert.equal(sent[0].key, undefined);
  const keys = sent.slice(1).map((s) => s.key);
  assert.ok(keys.every((key) => /^[0-9a-f-]{36}$/.test(key)));
  assert.equal(new Set(keys).size, keys.length);
});

test('request() sends the key it is given', async () => {
  const { sent, client } = recorder();
  await client.request('POST', '/agents/agt_1/conversations', { endUserId: 'u_1' }, { idempotencyKey: 'order-1234-chat' });
  await client.request('POST', '/agents/agt_1/conversations', { endUserId: 'u_1' }, { idempotencyKey: 'order-1234-chat' });
  assert.deepEqual(sent.map((s) => s.key), ['order-1234-chat', 'order-1234-chat']);
});
