import fs from 'fs';
import path from 'path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import yaml from 'js-yaml';

/**
 * JSON-schema validators over the vendored API documents (test/fixtures/vendor/README.md): OpenAI's
 * OpenAPI document, Cohere's, and the schemas hand-written from the Anthropic SDK's types. Each
 * document is added to its own Ajv (draft 2020-12, every `$ref` resolved inside the document) and a
 * schema is compiled the first time a test asks for it.
 */
const VENDOR = path.resolve('test/fixtures/vendor');

/**
 * OpenAPI 3.0's `nullable: true` (still used in places of both 3.1 documents, sometimes without a
 * `type`, which Ajv refuses) becomes what it means: the schema or null.
 */
function nullableToAnyOf(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableToAnyOf);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = nullableToAnyOf(v);
  const nullable = out.nullable;
  delete out.nullable;
  return nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

function makeAjv(): Ajv2020 {
  // strict off: the documents carry vendor keywords (x-oaiMeta, x-fern-*, discriminator) that describe, not constrain
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  return ajv;
}

interface Doc {
  ajv: Ajv2020;
  id: string;
  doc: Record<string, unknown>;
}

const docs = new Map<string, Doc>();

function load(id: string, read: () => Record<string, unknown>): Doc {
  let d = docs.get(id);
  if (!d) {
    const doc = nullableToAnyOf(read()) as Record<string, unknown>;
    const ajv = makeAjv();
    ajv.addSchema(doc, id);
    d = { ajv, id, doc };
    docs.set(id, d);
  }
  return d;
}

const openaiDoc = () => load('openai', () => JSON.parse(fs.readFileSync(path.join(VENDOR, 'openai/openapi.json'), 'utf8')));
const cohereDoc = () =>
  load('cohere', () => yaml.load(fs.readFileSync(path.join(VENDOR, 'cohere/cohere-openapi.yaml'), 'utf8')) as Record<string, unknown>);
const anthropicDoc = () =>
  load('anthropic-messages', () => JSON.parse(fs.readFileSync(path.join(VENDOR, 'anthropic/messages.schema.json'), 'utf8')));

function validator(d: Doc, pointer: string): ValidateFunction {
  const v = d.ajv.getSchema(`${d.id}#${pointer}`);
  if (!v) throw new Error(`no schema at ${d.id}#${pointer}`);
  return v;
}

/** Throws an assertion error listing every violation, with the value, so a failure says what to fix. */
function check(v: ValidateFunction, value: unknown, what: string): void {
  if (v(value)) return;
  const problems = (v.errors ?? [])
    .filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'if')
    .slice(0, 12)
    .map((e) => `  ${e.instancePath || '/'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`);
  throw new Error(`${what} does not conform:\n${problems.join('\n')}\nvalue: ${JSON.stringify(value).slice(0, 1500)}`);
}

/** A body against `#/components/schemas/<name>` of OpenAI's OpenAPI document. */
export function expectOpenAI(name: string, value: unknown): void {
  check(validator(openaiDoc(), `/components/schemas/${name}`), value, `OpenAI ${name}`);
}

let responseEvents: Map<string, string> | undefined;

/** Event type → schema name, read off the document's `ResponseStreamEvent` union. */
function responseEventSchemas(): Map<string, string> {
  if (responseEvents) return responseEvents;
  const schemas = (openaiDoc().doc.components as { schemas: Record<string, { anyOf?: Array<{ $ref: string }>; properties?: Record<string, { enum?: string[] }> }> }).schemas;
  responseEvents = new Map();
  for (const ref of schemas.ResponseStreamEvent.anyOf ?? []) {
    const name = ref.$ref.split('/').pop()!;
    const type = schemas[name]?.properties?.type?.enum?.[0];
    if (type) responseEvents.set(type, name);
  }
  return responseEvents;
}

/** A Responses stream event against the member of `ResponseStreamEvent` that its `type` names. */
export function expectResponsesEvent(event: { type?: unknown } & Record<string, unknown>): void {
  const name = responseEventSchemas().get(String(event.type));
  if (!name) throw new Error(`OpenAI's ResponseStreamEvent has no event of type ${JSON.stringify(event.type)}`);
  expectOpenAI(name, event);
}

function escapePointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A JSON body against Cohere's document: the response schema of `path`'s POST for `status`, `$ref`s followed. */
export function expectCohere(apiPath: string, status: number, value: unknown): void {
  const d = cohereDoc();
  const paths = d.doc.paths as Record<string, { post: { responses: Record<string, { $ref?: string }> } }>;
  let pointer = `/paths/${escapePointer(apiPath)}/post/responses/${status}`;
  const ref = paths[apiPath].post.responses[String(status)]?.$ref;
  if (ref) pointer = ref.slice(1);
  check(validator(d, `${pointer}/content/application~1json/schema`), value, `Cohere ${apiPath} ${status}`);
}

/**
 * A Cohere v2 chat stream event against the member of `StreamedChatResponseV2` its `type` names (the
 * union's discriminator mapping; the members' loose shapes make the union itself match several).
 */
export function expectCohereChatEvent(event: { type?: unknown } & Record<string, unknown>): void {
  expectCohereUnionMember('StreamedChatResponseV2', String(event.type), event);
}

/**
 * A Cohere v1 chat stream event (`POST /v1/chat`) against the member of `StreamedChatResponse` its
 * `event_type` names; a `stream-end`'s response as expectCohereV1ChatResponse checks it. Two of the
 * document's own members cannot match themselves (cohereV1ToolEvents below).
 */
export function expectCohereV1ChatEvent(event: { event_type?: unknown } & Record<string, unknown>): void {
  const kind = String(event.event_type);
  if (cohereV1ToolEvents.has(kind)) return cohereV1ToolEvent(kind, event);
  if (kind !== 'stream-end') return expectCohereUnionMember('StreamedChatResponse', kind, event);
  expectCohereV1ChatResponse(event.response);
  expectCohereUnionMember('StreamedChatResponse', kind, Object.assign({}, event, { response: withoutHistory(event.response) }));
}

/**
 * v1's NonStreamedChatResponse. Its `chat_history` items are each checked against the member of
 * `Message` their `role` names, and the rest against the schema: the document's `Message` is a
 * `oneOf` whose two members both match a USER or CHATBOT message (ChatToolMessage requires only
 * `role`), so the union itself refuses every history Cohere's API returns.
 */
export function expectCohereV1ChatResponse(body: unknown): void {
  const d = cohereDoc();
  const schemas = (d.doc.components as { schemas: Record<string, { discriminator?: { mapping?: Record<string, string> } }> }).schemas;
  for (const [i, m] of (((body as { chat_history?: Array<{ role?: string }> }).chat_history ?? []).entries())) {
    const ref = schemas.Message.discriminator?.mapping?.[String(m.role)];
    if (!ref) throw new Error(`chat_history[${i}]: Cohere's Message has no role ${JSON.stringify(m.role)}`);
    check(validator(d, ref.slice(1)), m, `Cohere chat_history[${i}]`);
  }
  check(validator(d, '/components/schemas/NonStreamedChatResponse'), withoutHistory(body), 'Cohere NonStreamedChatResponse');
}

const withoutHistory = (body: unknown) => {
  const rest = Object.assign({}, body as Record<string, unknown>);
  delete rest.chat_history;
  return rest;
};

/**
 * The tool events of v1's stream: the document maps `tool-calls-generation` and `tool-calls-chunk` to
 * members built on ChatStreamEvent, whose `event_type` enum lists neither, so they can match no
 * member. They are checked against their own part of the member (its second `allOf` entry) and their
 * `event_type` against the union's mapping.
 */
const cohereV1ToolEvents = new Set(['tool-calls-generation', 'tool-calls-chunk']);
function cohereV1ToolEvent(kind: string, event: unknown): void {
  const d = cohereDoc();
  const union = (d.doc.components as { schemas: Record<string, { discriminator?: { mapping?: Record<string, string> } }> }).schemas.StreamedChatResponse;
  const ref = union.discriminator?.mapping?.[kind];
  if (!ref) throw new Error(`Cohere's StreamedChatResponse has no event of type ${JSON.stringify(kind)}`);
  check(validator(d, `${ref.slice(1)}/allOf/1`), event, `Cohere ${kind} event`);
}

function expectCohereUnionMember(unionName: string, kind: string, event: unknown): void {
  const d = cohereDoc();
  const union = (d.doc.components as { schemas: Record<string, { discriminator?: { mapping?: Record<string, string> } }> }).schemas[unionName];
  const ref = union.discriminator?.mapping?.[kind];
  if (!ref) throw new Error(`Cohere's ${unionName} has no event of type ${JSON.stringify(kind)}`);
  check(validator(d, ref.slice(1)), event, `Cohere ${kind} event`);
}

/** A request body the gateway sent a Cohere upstream, against the request schema of `path`'s POST in Cohere's document. */
export function expectCohereRequest(apiPath: string, value: unknown): void {
  check(validator(cohereDoc(), `/paths/${escapePointer(apiPath)}/post/requestBody/content/application~1json/schema`), value, `Cohere ${apiPath} request`);
}

/** A body against a `$defs` entry of the schemas written from the Anthropic SDK's types. */
export function expectAnthropic(def: string, value: unknown): void {
  check(validator(anthropicDoc(), `/$defs/${def}`), value, `Anthropic ${def}`);
}

/*
 * Where OpenAI's own API and its document disagree, the API wins and the suite says so here, one
 * function per exception (docs/dialects.md, "Conformance").
 */

/**
 * `user: null` always, and `usage: null` while a streamed response is in progress or when it failed:
 * the document's own Response examples (response.in_progress, response.failed) send both, its schema
 * types them as a string and an object only.
 */
export function withoutNullUser<T>(response: T): T {
  const r = { ...(response as Record<string, unknown>) };
  if (r.user === null) delete r.user;
  if (r.usage === null && ['queued', 'in_progress', 'failed', 'cancelled'].includes(String(r.status))) delete r.usage;
  return r as T;
}

/** A Responses event with its embedded Response (created, in_progress, completed...) under the same exception. */
export function responsesEventForDocument<T extends { response?: unknown }>(event: T): T {
  return event.response ? { ...event, response: withoutNullUser(event.response) } : event;
}

/** `encoding_format: base64`: the API answers each embedding as a base64 string of float32s; the document types it as numbers only. */
export function decodedEmbeddings(body: { data: Array<{ embedding: unknown }> }): unknown {
  return {
    ...body,
    data: body.data.map((d) => {
      if (typeof d.embedding !== 'string') return d;
      const b = Buffer.from(d.embedding, 'base64');
      return { ...d, embedding: Array.from(new Float32Array(b.buffer, b.byteOffset, b.length / 4)) };
    }),
  };
}

/**
 * A streamed legacy completion chunk: the document has no chunk schema, the API streams
 * CreateCompletionResponse objects whose `finish_reason` is null until the last one.
 */
export function completionChunkForDocument(chunk: { choices: Array<{ finish_reason: unknown }> }): unknown {
  return { ...chunk, choices: chunk.choices.map((c) => ({ ...c, finish_reason: c.finish_reason ?? 'stop' })) };
}
