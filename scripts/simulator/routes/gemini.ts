import crypto from 'crypto';
import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults, sleep } from '../faults';
import { countTokens, replyWords } from '../text';
import { embedText } from '../vectors';
import { SIM_EMBED_DIMENSIONS } from './embeddings';

type Part = Record<string, unknown> & { text?: string; thought?: boolean; inlineData?: { mimeType?: string; data?: string }; functionCall?: { id?: string; name: string; args?: unknown }; functionResponse?: { id?: string; name: string; response?: { output?: unknown } }; thoughtSignature?: string };
type Content = { role?: string; parts?: Part[] };
type FunctionCall = { id?: string; name: string; args?: unknown };

/** The fields of a GenerateContentRequest (Gemini API reference); anything else is refused as the API does. */
/**
 * A function call's thought signature, random bytes of about the size Gemini's are (an encrypted blob:
 * hundreds of base64 characters, far beyond OpenAI's 64-character call ids the gateway's ids must not be held to).
 */
const SIGNATURE_BYTES = 256;
/**
 * The placeholder signatures Google documents for function calls Gemini did not write, which it accepts
 * in place of one of its own (ai.google.dev/gemini-api/docs/thought-signatures, FAQs: "You can set the
 * following dummy signatures of either "context_engineering_is_the_way_to_go" or
 * "skip_thought_signature_validator" in the thought signature field to skip validation").
 */
const PLACEHOLDER_SIGNATURES = new Set(['context_engineering_is_the_way_to_go', 'skip_thought_signature_validator']);

/**
 * Whether a thought signature is one Gemini takes: a placeholder above, or one of its own (here, what
 * this route hands out: SIGNATURE_BYTES in standard base64). Anything else, the base64 of a placeholder
 * too, is refused as the API refuses a signature it did not issue ("Thought signature is not valid").
 */
function signatureAccepted(sig: string): boolean {
  return PLACEHOLDER_SIGNATURES.has(sig) || (/^[A-Za-z0-9+/]+={0,2}$/.test(sig) && Buffer.from(sig, 'base64').length === SIGNATURE_BYTES);
}

const REQUEST_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent']);

/** google.rpc.Code names the API sends with each HTTP status. */
const GOOGLE_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };

function googleError(res: Response, code: number, status: string, message: string, details?: unknown[]): void {
  res.status(code).json({ error: { code, message, status, ...(details ? { details } : {}) } });
}

/**
 * A knob's failure as Google answers it: never a Retry-After header; a 429's wait is a RetryInfo
 * detail (`retryDelay`, a protobuf Duration), as the Gemini API sends it.
 */
function knobError(res: Response, code: number, retryAfter: number | undefined): void {
  if (code === 429 && retryAfter !== undefined) {
    const message = `You exceeded your current quota, please check your plan and billing details. Please retry in ${retryAfter}s.`;
    return googleError(res, 429, 'RESOURCE_EXHAUSTED', message, [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfter}s` }]);
  }
  googleError(res, code, GOOGLE_STATUS[code] ?? 'INTERNAL', `simulated status ${code}`);
}

/** An invalid key: 400 INVALID_ARGUMENT with ErrorInfo reason API_KEY_INVALID (not a 401 or 403). */
function keyInvalid(res: Response): void {
  const message = 'API key not valid. Please pass a valid API key.';
  googleError(res, 400, 'INVALID_ARGUMENT', message, [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
  ]);
}

function partText(p: Part): string {
  if (typeof p.text === 'string') return p.text;
  if (p.functionResponse) return String(p.functionResponse.response?.output ?? JSON.stringify(p.functionResponse.response ?? {}));
  if (p.inlineData) return `[${p.inlineData.mimeType} ${Buffer.from(p.inlineData.data ?? '', 'base64').length} bytes]`;
  return '';
}

/** System instructions seen before: a repeat is reported as implicitly cached, as the API does. */
const seenSystems = new Set<string>();

/** Problems the real API answers 400 for, checked here so that a wrong translation fails the tests. */
function invalid(body: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(body).find((k) => !REQUEST_FIELDS.has(k));
  if (unknown) return `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`;
  const contents = body.contents as Content[] | undefined;
  if (!Array.isArray(contents) || !contents.length) return '* GenerateContentRequest.contents: contents is not specified';
  for (const c of contents) {
    if (c.role !== 'user' && c.role !== 'model') return `Please use a valid role: user, model.`;
    if (!Array.isArray(c.parts) || !c.parts.length) return '* GenerateContentRequest.contents.parts: contents.parts must not be empty.';
  }
  // Gemini 3: the function calls of the current turn must carry their thought signature back.
  const lastUserText = contents.map((c, i) => (c.role === 'user' && c.parts!.some((p) => typeof p.text === 'string') ? i : -1)).reduce((a, b) => Math.max(a, b), -1);
  for (const c of contents.slice(lastUserText + 1)) {
    const first = c.parts!.find((p) => p.functionCall);
    if (c.role === 'model' && first && !first.thoughtSignature) return 'Function call is missing a thought_signature in functionCall parts.';
    const signed = c.role === 'model' ? c.parts!.find((p) => p.functionCall && p.thoughtSignature && !signatureAccepted(p.thoughtSignature)) : undefined;
    if (signed) return 'Thought signature is not valid.';
  }
  return undefined;
}

/** The Gemini API (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`, `:batchEmbedContents`). */
export function geminiRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.post(/^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/, async (req: Request, res: Response) => {
    const entry = log.record(req, res);
    const model = String((req.params as Record<string, string>)[0]);
    const method = String((req.params as Record<string, string>)[1]);
    entry.model = model;
    if (!req.headers['x-goog-api-key']) return googleError(res, 403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
    const body = (req.body ?? {}) as Record<string, unknown>;
    const k = knobs.take(model);
    // The knobs' statuses answer in Google's error shape ({error: {code, message, status}}).
    if (await applyFaults({ ...k, status: undefined }, res)) return;
    if (k.keyInvalid) return keyInvalid(res);
    if (k.status && k.status >= 400) return knobError(res, k.status, k.retryAfter);
    if (method === 'batchEmbedContents') return embedBatch(model, body, res);
    if (method === 'streamGenerateContent' && req.query.alt !== 'sse') return googleError(res, 400, 'INVALID_ARGUMENT', 'The simulator streams only with alt=sse.');
    const bad = invalid(body);
    if (bad) return googleError(res, 400, 'INVALID_ARGUMENT', bad);

    const contents = body.contents as Content[];
    const gen = (body.generationConfig ?? {}) as { maxOutputTokens?: number; stopSequences?: string[]; responseMimeType?: string; thinkingConfig?: { includeThoughts?: boolean }; responseLogprobs?: boolean; logprobs?: number; candidateCount?: number };
    const system = ((body.systemInstruction as Content | undefined)?.parts ?? []).map(partText).join('\n');
    const prompt = [system, ...contents.flatMap((c) => c.parts!.map(partText))].join('\n');
    const last = contents.at(-1)!;
    const lastText = last.parts!.map(partText).join(' ');
    const answering = last.parts!.some((p) => p.functionResponse);
    const maxTokens = gen.maxOutputTokens ?? 8192;
    const decls = ((body.tools as Array<{ functionDeclarations?: Array<{ name: string }> }> | undefined) ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const mode = (body.toolConfig as { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } } | undefined)?.functionCallingConfig;
    const tool = answering || !decls.length || mode?.mode === 'NONE' ? undefined : mode?.mode === 'ANY' ? (mode.allowedFunctionNames?.[0] ?? decls[0].name) : /\b(use|call) (a |the )?tool\b/i.test(lastText) ? decls[0].name : undefined;
    let words = replyWords(lastText, k.outputWords ?? 12, maxTokens);
    const cut = words.findIndex((w) => (gen.stopSequences ?? []).includes(w));
    if (cut >= 0) words = words.slice(0, cut);
    const thought = gen.thinkingConfig?.includeThoughts ? `Considering: ${lastText.slice(0, 80)}` : undefined;
    const candidates = Array.from({ length: candidateCountOf(gen.candidateCount) }, (_, index) => candidateOf(index, index === 0 ? words : words.slice(0, Math.max(1, words.length - index)), cut >= 0, maxTokens, gen.responseMimeType === 'application/json', thought, tool ? { ...(k.callIds ? { id: crypto.randomBytes(6).toString('hex') } : {}), name: tool, args: { query: lastText.slice(0, 100) } } : undefined));
    const promptTokens = countTokens(prompt) + 3 * contents.length;
    const cached = system && seenSystems.has(system) ? countTokens(system) : 0;
    if (system) seenSystems.add(system);
    // one count for the whole answer: every candidate's output and thoughts (GenerateContentResponse.usageMetadata)
    const candidatesTokens = candidates.reduce((n, c) => n + c.tokens, 0);
    const thoughtsTokens = thought ? candidates.length * countTokens(thought) : 0;
    const usageMetadata: Record<string, unknown> = {
      promptTokenCount: promptTokens,
      candidatesTokenCount: candidatesTokens,
      ...(cached ? { cachedContentTokenCount: cached } : {}),
      ...(thought ? { thoughtsTokenCount: thoughtsTokens } : {}),
      totalTokenCount: promptTokens + candidatesTokens + thoughtsTokens,
    };
    const responseId = crypto.randomBytes(10).toString('base64url');
    const withLogprobs = gen.responseLogprobs === true && !k.noLogprobs;
    if (method === 'generateContent') {
      const cands = candidates.map((c) => ({ content: { parts: c.parts, role: 'model' }, finishReason: c.finish, index: c.index, ...(withLogprobs ? logprobsOf(c.parts, 0, gen.logprobs ?? 0) : {}) }));
      res.json({ candidates: cands, usageMetadata, modelVersion: model, responseId });
      return;
    }
    res.status(200).setHeader('Content-Type', 'text/event-stream');
    res.flushHeaders();
    const pieces = streamedChunks(candidates, withLogprobs ? (gen.logprobs ?? 0) : undefined).map((cands, i, all) => {
      const lastOne = i === all.length - 1;
      return `data: ${JSON.stringify({ candidates: cands, usageMetadata: lastOne ? usageMetadata : { promptTokenCount: promptTokens, totalTokenCount: promptTokens }, modelVersion: model, responseId })}\r\n\r\n`;
    });
    for (let i = 0; i < pieces.length; i++) {
      if (res.destroyed) return;
      if (k.dropAfterChunks !== undefined && i >= k.dropAfterChunks) {
        await sleep(20);
        res.socket?.destroy();
        return;
      }
      res.write(pieces[i]);
      if (k.tokenDelayMs) await sleep(k.tokenDelayMs);
    }
    res.end();
  });
  return r;
}

/** `generationConfig.candidateCount`: how many candidates to answer (1 when unset). */
function candidateCountOf(n: number | undefined): number {
  return Number.isInteger(n) && (n as number) > 1 ? (n as number) : 1;
}

type Candidate = { index: number; parts: Part[]; finish: string; tokens: number };

/**
 * One candidate of the answer: the first says `words`, each next one a word less (so that the
 * candidates end at different chunks of a stream); a function call when the model calls one (each
 * candidate the same call); its thought first when thoughts were asked for. MAX_TOKENS when it ran
 * to `maxTokens` (not after a stop sequence cut it).
 */
function candidateOf(index: number, words: string[], cut: boolean, maxTokens: number, json: boolean, thought: string | undefined, call: FunctionCall | undefined): Candidate {
  const finish = !cut && words.length >= maxTokens ? 'MAX_TOKENS' : 'STOP';
  const said = json ? [JSON.stringify({ reply: words.join(' ') })] : words;
  const parts: Part[] = [];
  if (thought) parts.push({ text: thought, thought: true });
  if (call) parts.push({ functionCall: call, thoughtSignature: crypto.randomBytes(SIGNATURE_BYTES).toString('base64') });
  else said.forEach((w, i) => parts.push({ text: i === 0 ? w : ` ${w}` }));
  return { index, parts, finish, tokens: call ? countTokens(JSON.stringify(call)) : countTokens(said.join(' ')) };
}

/**
 * The stream's chunks, as Google's API streams several candidates: each chunk (a whole
 * GenerateContentResponse) holds the next part of every candidate still going, each named by its
 * `index`, a candidate's last part with its `finishReason`, and a candidate that has ended is no longer
 * in the list (google-gemini/generative-ai-python, google/generativeai/types/generation_types.py,
 * `_join_candidate_lists`: "Assuming that is a candidate ends, it is no longer returned in the list of
 * candidates and that's why candidates have an index"; `Candidate.index`: "Index of the candidate in the
 * list of response candidates", ai.google.dev/api/generate-content). `top`: log probabilities asked for.
 */
function streamedChunks(candidates: Candidate[], top: number | undefined): Array<Array<Record<string, unknown>>> {
  const steps = Math.max(...candidates.map((c) => c.parts.length));
  return Array.from({ length: steps }, (_, i) =>
    candidates
      .filter((c) => i < c.parts.length)
      .map((c) => {
        const p = c.parts[i];
        const lp = top !== undefined ? logprobsOf([p], c.parts.slice(0, i).filter((q) => typeof q.text === 'string' && !q.thought).length, top) : {};
        return { content: { parts: [p], role: 'model' }, index: c.index, ...(i === c.parts.length - 1 ? { finishReason: c.finish } : {}), ...lp };
      }),
  );
}

/**
 * `responseLogprobs`: a candidate's `avgLogprobs` and `logprobsResult` (the API's LogprobsResult,
 * @google/genai: `chosenCandidates` per decoding step, `topCandidates` with `logprobs` tokens each, the
 * chosen one first), over its text parts (not thoughts; a function call has none), one token a part;
 * a streamed chunk's result covers that chunk's tokens. `from` numbers the first token (its log probability).
 */
function logprobsOf(parts: Part[], from: number, top: number): Record<string, unknown> {
  const tokens = parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text!);
  const tok = (token: string, i: number) => ({ token, logProbability: -0.01 * (from + i + 1) });
  const chosenCandidates = tokens.map(tok);
  const topCandidates = tokens.map((t, i) => ({ candidates: Array.from({ length: top }, (_, j) => (j === 0 ? tok(t, i) : { token: `alt${j}`, logProbability: -1 - j })) }));
  const avg = chosenCandidates.length ? chosenCandidates.reduce((a, c) => a + c.logProbability, 0) / chosenCandidates.length : 0;
  return { avgLogprobs: avg, logprobsResult: { chosenCandidates, topCandidates } };
}

/** batchEmbedContents: one embedding per request, each request naming the model of the URL. */
function embedBatch(model: string, body: Record<string, unknown>, res: Response): void {
  const requests = body.requests as Array<{ model?: string; content?: Content; outputDimensionality?: number }> | undefined;
  if (!Array.isArray(requests) || !requests.length) return googleError(res, 400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: requests is not specified');
  // the Gemini API's own bound on a batch (and its words)
  if (requests.length > 100) return googleError(res, 400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n');
  const embeddings: Array<{ values: number[] }> = [];
  for (const [i, q] of requests.entries()) {
    if (q.model !== `models/${model}`) return googleError(res, 400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].model: unexpected model name format`);
    const text = (q.content?.parts ?? []).map(partText).join(' ');
    if (!text) return googleError(res, 400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].content: contents must not be empty.`);
    const dims = q.outputDimensionality ?? SIM_EMBED_DIMENSIONS;
    if (!Number.isInteger(dims) || dims < 1 || dims > SIM_EMBED_DIMENSIONS) return googleError(res, 400, 'INVALID_ARGUMENT', 'outputDimensionality is out of range.');
    embeddings.push({ values: embedText(text, SIM_EMBED_DIMENSIONS, dims) });
  }
  res.json({ embeddings });
}
