// AgentNava JavaScript client: the calls of the Memory document, over the REST API (/api/v1/).
// An ES module with no dependencies; it uses the global fetch of Node 20+ and browsers.
//
//   import { AgentNava } from './agentnava.js';
//   const agent = new AgentNava({ apiKey, baseUrl: 'https://your-agentnava-host' }).agent('agt_493fb4f0cf13');
//   await agent.update({ memorySettings: { on: true, quietMinutes: 15 } });
//   const ananya = agent.endUser('u_ananya');
//   await ananya.memory.set('Prefers email over phone.');
//   const memory = await ananya.memory.get();
//
// Beyond the document: client.agents() and client.createAgent() find and make agents;
// agent.endUsers() lists everyone an agent has met; endUser.conversations() and export() read what is
// kept about one person; client.endUser(id).erase() erases them on every agent of the team;
// client.conversation(id).get() reads a chat; client.webhooks (and agent.webhooks) manage endpoints;
// client.auditLog() reads who did what to the team's access. A key acts with its maker's role: webhooks'
// changes, erase() on every agent, agent deletion and the audit log want an owner's or admin's key
// (otherwise `admin_only`, 403).
//
// Compare-and-set: a memory read (get, set, stop) carries its version as `memory.etag` (not
// enumerable: the object is still the API's JSON). Pass it back, `set(text, { memory })` or
// `delete({ memory })`, and the call sends `If-Match`: if the memory changed since that read, it
// throws `memory_changed` (412) and nothing changes. Without it the last write wins.
//
// Idempotency: every write (POST, PUT, PATCH, DELETE) carries a new `Idempotency-Key` (a UUID), so the
// server answers a repeat of it with the first answer instead of doing it again; pass your own as
// `request(method, path, body, { idempotencyKey })` to repeat a call safely (after a timeout, say).
//
// Keep the API key on your server: it can read and change every memory of the team.
// A refused call throws an AgentNavaError whose `code` is the API's (`memory_refused`, ...).

/** An error answered by the API: `code` (e.g. 'memory_refused'), `status`, and `field` when one is named. */
export class AgentNavaError extends Error {
  constructor({ status, code, message, field = undefined, retryAfter = undefined }) {
    super(message || code);
    this.name = 'AgentNavaError';
    this.status = status;
    this.code = code;
    if (field !== undefined) this.field = field;
    if (retryAfter !== undefined) this.retryAfter = retryAfter;
  }
}

const API_PREFIX = '/api/v1';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A new idempotency key: a random UUID (Node 19+ and browsers), else none. */
function newIdempotencyKey() {
  const source = globalThis.crypto;
  return source && typeof source.randomUUID === 'function' ? source.randomUUID() : undefined;
}
const segment = (value) => encodeURIComponent(String(value));

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    search.set(name, value instanceof Date ? value.toISOString() : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export class AgentNava {
  #apiKey;
  #baseUrl;
  #fetch;

  /**
   * @param {{apiKey: string, baseUrl?: string, fetch?: typeof fetch}} options
   *   baseUrl: the AgentNava server, e.g. 'https://agentnava.example' (with or without /api/v1).
   */
  constructor({ apiKey, baseUrl = 'https://agentnava.com', fetch: fetchImpl } = {}) {
    if (!apiKey || typeof apiKey !== 'string') throw new TypeError('AgentNava needs an apiKey.');
    this.#apiKey = apiKey;
    const root = String(baseUrl).replace(/\/+$/, '');
    this.#baseUrl = root.endsWith(API_PREFIX) ? root : root + API_PREFIX;
    const found = fetchImpl || globalThis.fetch;
    if (typeof found !== 'function') throw new TypeError('No fetch: use Node 20+ or pass options.fetch.');
    // A browser's fetch must be called on the window, not as a method of this client.
    this.#fetch = fetchImpl ? fetchImpl : found.bind(globalThis);
  }

  /** The team's agents, newest first: {agents, next}. Page with {before} or {cursor} (next's). */
  agents({ limit, before, cursor } = {}) {
    return this.request('GET', `/agents${query({ limit, before, cursor })}`);
  }

  /** A new agent, its configuration published as version 1: {name, instructions?, memorySettings?, ...}. */
  createAgent(config) {
    return this.request('POST', '/agents', config);
  }

  /** One person across the team's agents: erase() removes them on every agent, answering what went per agent. */
  endUser(endUserId) {
    const client = this;
    return Object.freeze({
      id: endUserId,
      erase: () => client.request('DELETE', `/end-users/${segment(endUserId)}`),
    });
  }

  /** The team's audit log, newest first: {events, next}. Page with {before} or {cursor} (next's). */
  auditLog({ limit, before, cursor } = {}) {
    return this.request('GET', `/audit-log${query({ limit, before, cursor })}`);
  }

  /** The team's webhook endpoints: list, create({url, events, agentId?, includeText?}), get, update, delete. */
  get webhooks() {
    return this.#webhooks();
  }

  #webhooks(agentId = undefined) {
    const client = this;
    const path = (id) => `/webhooks/${segment(id)}`;
    return Object.freeze({
      list: async () => {
        const { webhooks } = await client.request('GET', '/webhooks');
        return agentId === undefined ? webhooks : webhooks.filter((hook) => hook.agentId === agentId);
      },
      create: (options) => client.request('POST', '/webhooks', agentId === undefined ? options : { ...options, agentId }),
      get: (id) => client.request('GET', path(id)),
      update: (id, changes) => client.request('PATCH', path(id), changes),
      delete: async (id) => {
        await client.request('DELETE', path(id));
      },
    });
  }

  /** One agent, with the document's methods (get, update, memories, start, endUser) and endUsers, webhooks. */
  agent(agentId) {
    const client = this;
    const base = `/agents/${segment(agentId)}`;
    return Object.freeze({
      /** The agent: version and memorySettings (with `notice`, to show in a chat you draw). */
      get: () => client.request('GET', base),
      /** Change the configuration; publishes a new version at once. Answers the agent. */
      update: (changes) => client.request('PATCH', base, changes),
      /** Who has a memory, newest change first: {memories, next}. Page with {before} or {cursor}. */
      memories: ({ limit, before, cursor } = {}) => client.request('GET', `${base}/memories${query({ limit, before, cursor })}`),
      /** Start a conversation: {id, usesMemory, ...} with send(text) and record(event). */
      start: async ({ endUserId, memory, project } = {}) => {
        const body = { endUserId };
        if (memory !== undefined) body.memory = memory;
        if (project !== undefined) body.project = project;
        return client.#conversation(await client.request('POST', `${base}/conversations`, body));
      },
      /** Everyone this agent has met, with or without a memory: {endUsers, next}. `q`: ids starting with it. */
      endUsers: ({ limit, before, cursor, q } = {}) => client.request('GET', `${base}/end-users${query({ limit, before, cursor, q })}`),
      /** This agent's webhook endpoints (create() registers one for this agent only). */
      webhooks: client.#webhooks(agentId),
      /** Try the draft's memory settings on past chats: a job {id, status, done, results}; get(), cancel(), wait(). */
      try: async ({ people } = {}) => client.#job(`${base}/try`, await client.request('POST', `${base}/try`, people === undefined ? {} : { people })),
      /** Apply the published settings to what is kept: a job {id, status, reviewed, total}; get(), cancel(), wait(). */
      apply: async () => client.#job(`${base}/apply`, await client.request('POST', `${base}/apply`)),
      /** Check memory instructions before saving them: {opened, decisions, recommendAskFirst, guidance}. */
      instructionCheck: ({ instructions, askFirst } = {}) =>
        client.request('POST', `${base}/instruction-check`, askFirst === undefined ? { instructions } : { instructions, askFirst }),
      /** One end user of this agent: memory.get/set/delete/stop, erase, conversations and export. */
      endUser: (endUserId) => {
        const path = `${base}/end-users/${segment(endUserId)}`;
        return Object.freeze({
          id: endUserId,
          memory: Object.freeze({
            /** Their memory; `.etag` is the version it read (pass the memory to set or delete). */
            get: () => client.#memory('GET', `${path}/memory`),
            /** Replace it. With `{ memory }` (a read) it is refused with memory_changed if the memory changed since. */
            set: (text, { memory } = {}) => client.#memory('PUT', `${path}/memory`, { text }, memory),
            /** Gone, and old chats cannot bring it back. With `{ memory }`: only if it has not changed since that read. */
            delete: async ({ memory } = {}) => {
              await client.#memory('DELETE', `${path}/memory`, undefined, memory);
            },
            stop: (stop = true) => client.#memory('POST', `${path}/memory/stop`, { stop }),
          }),
          /** Everything about them on this agent; answers what was removed, counted per kind. */
          erase: () => client.request('DELETE', path),
          /** Their conversations on this agent, newest first: {conversations, next}. */
          conversations: ({ limit, before, cursor } = {}) => client.request('GET', `${path}/conversations${query({ limit, before, cursor })}`),
          /** Everything kept about them on this agent, as one JSON document (an access request's answer). */
          export: () => client.request('GET', `${path}/export`),
        });
      },
    });
  }

  #job(base, data) {
    const client = this;
    const path = `${base}/${segment(data.id)}`;
    const job = {
      ...data,
      /** The job as it is now. */
      get: () => client.request('GET', path),
      /** Stop it (between two people or memories); answers the job. */
      cancel: () => client.request('POST', `${path}/cancel`),
      /** Poll until it is done, cancelled or failed; answers the finished job. */
      wait: async ({ intervalMs = 1000 } = {}) => {
        for (;;) {
          const now = await client.request('GET', path);
          if (!['queued', 'running'].includes(now.status)) return now;
          await new Promise((ok) => setTimeout(ok, intervalMs));
        }
      },
    };
    return Object.freeze(job);
  }

  /** A conversation you already started (e.g. after a restart), by its id. */
  conversation(conversationId) {
    return this.#conversation({ id: conversationId });
  }

  #conversation(data) {
    const client = this;
    const base = `/conversations/${segment(data.id)}`;
    return Object.freeze({
      ...data,
      /** The conversation with its messages, actions and events. */
      get: () => client.request('GET', base),
      /** Send the person's message; answers {reply, handledAsRequest, ...}. */
      send: (text) => client.request('POST', `${base}/messages`, { text }),
      /** Record what ran: {type: 'action', name, status} or {type: 'tool_result'|'file'|'web_page', text}. */
      record: (event) => client.request('POST', `${base}/events`, event),
    });
  }

  /** A memory call: If-Match from the memory it was made on (if given), the answer's ETag as `.etag`. */
  async #memory(method, path, body = undefined, madeOn = undefined) {
    const headers = {};
    if (madeOn !== undefined && madeOn !== null) {
      const tag = typeof madeOn === 'string' ? madeOn : madeOn.etag;
      if (!tag) throw new TypeError('Pass the memory as get() or set() answered it (it carries its etag).');
      headers['If-Match'] = tag;
    }
    const { payload, response } = await this.#send(method, path, body, headers);
    const tag = response.headers.get('ETag');
    if (payload && typeof payload === 'object' && tag) {
      Object.defineProperty(payload, 'etag', { value: tag, enumerable: false });
    }
    return payload;
  }

  /** Any API call, e.g. request('GET', '/agents/agt_1/versions'). Throws AgentNavaError.
   * `idempotencyKey`: the key a write carries (else a new one): the same key and body again answers the first answer. */
  async request(method, path, body = undefined, { idempotencyKey } = {}) {
    const headers = idempotencyKey === undefined ? {} : { 'Idempotency-Key': String(idempotencyKey) };
    return (await this.#send(method, path, body, headers)).payload;
  }

  async #send(method, path, body = undefined, extraHeaders = {}) {
    const headers = { Authorization: `Bearer ${this.#apiKey}`, Accept: 'application/json' };
    if (WRITES.has(String(method).toUpperCase())) {
      const key = newIdempotencyKey();
      if (key !== undefined) headers['Idempotency-Key'] = key;
    }
    Object.assign(headers, extraHeaders);
    const init = { method, headers };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await this.#fetch(this.#baseUrl + path, init);
    if (response.status === 204) return { payload: undefined, response };
    const text = await response.text();
    let payload;
    try {
      payload = text ? JSON.parse(text) : undefined;
    } catch {
      payload = undefined;
    }
    if (!response.ok) {
      const error = payload && payload.error ? payload.error : {};
      const retry = response.headers.get('Retry-After');
      throw new AgentNavaError({
        status: response.status,
        code: error.code || `http_${response.status}`,
        message: error.message || `HTTP ${response.status}`,
        field: error.field,
        retryAfter: retry ? Number(retry) : undefined,
      });
    }
    return { payload, response };
  }
}

export default AgentNava;
