import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults, sleep } from '../faults';
import { contentText, countTokens, replyWords } from '../text';
import { decisionCompletion, isDecisionRequest } from '../decision';
import { answerFromToolResult, searchToolCall } from '../search-tools';

type Msg = { role: string; content?: unknown };
type Tool = { type: string; function?: { name: string } };

/**
 * Which tool the simulated model calls, if any: a forced choice, or a user asking for a tool; an
 * `allowed_tools` choice (ChatCompletionAllowedToolChoice) limits the tools to its list, and its mode
 * `required` forces one of them.
 */
function pickTool(body: Record<string, unknown>, lastUser: string): string | undefined {
  let tools = (body.tools as Tool[] | undefined)?.filter((t) => t.type === 'function' && t.function?.name);
  if (!tools?.length || body.tool_choice === 'none') return undefined;
  let choice = body.tool_choice as { type?: string; function?: { name?: string }; allowed_tools?: { mode?: string; tools?: Tool[] } } | string | undefined;
  if (typeof choice === 'object' && choice?.type === 'allowed_tools') {
    const allowed = new Set((choice.allowed_tools?.tools ?? []).map((t) => t.function?.name));
    tools = tools.filter((t) => allowed.has(t.function!.name));
    if (!tools.length) return undefined;
    choice = choice.allowed_tools?.mode === 'required' ? 'required' : 'auto';
  }
  if (typeof choice === 'object' && choice?.function?.name) return choice.function.name;
  if (choice === 'required' || /\b(use|call) (a |the )?tool\b/i.test(lastUser)) return tools[0].function!.name;
  return undefined;
}

/**
 * The `service_tier` an answer names when the request set one, as OpenAI's do ("When the
 * `service_tier` parameter is set, the response body will include the `service_tier` value based on
 * the processing mode actually used to serve the request"; `auto` is the project's tier, `default`
 * unless configured; `fast` is answered `priority`: its API document, ServiceTier), on the JSON answer
 * and every streamed chunk; `served` (the `servedTier` knob) stands for another tier served, and
 * `project` (the `projectTier` knob) for the project's tier serving a request without one, or `auto`.
 */
function servedTier(asked: unknown, served: string | undefined, project: string | undefined): string | undefined {
  if (project && (asked === undefined || asked === null || asked === 'auto')) return project;
  if (typeof asked !== 'string') return undefined;
  if (served) return served;
  return asked === 'auto' ? 'default' : asked === 'fast' ? 'priority' : asked;
}

/** Audio tokens the simulator counts per `input_audio` part, and per text token of an answer asked in audio. */
export const SIM_INPUT_AUDIO_TOKENS = 50;
export const SIM_AUDIO_TOKENS_PER_TOKEN = 4;

/**
 * The audio tokens of a request and its answer, as OpenAI reports them within its counts (its API
 * document's CompletionUsage: `prompt_tokens_details.audio_tokens`, "Audio input tokens present in the
 * prompt"; `completion_tokens_details.audio_tokens`, with `text_tokens` the transcript's): each
 * `input_audio` part counts SIM_INPUT_AUDIO_TOKENS, an answer asked in audio (`audio`, or `modalities`
 * naming `audio`) SIM_AUDIO_TOKENS_PER_TOKEN per text token. Undefined when the request has neither.
 */
function audioUsage(body: Record<string, unknown>, messages: Msg[], textTokens: number): { input: number; output: number } | undefined {
  const parts = messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type?: unknown }>) : [])).filter((p) => p?.type === 'input_audio').length;
  const asked = body.audio != null || (Array.isArray(body.modalities) && body.modalities.includes('audio'));
  if (!parts && !asked) return undefined;
  return { input: parts * SIM_INPUT_AUDIO_TOKENS, output: asked ? textTokens * SIM_AUDIO_TOKENS_PER_TOKEN : 0 };
}

/**
 * The longest tool-call id OpenAI's chat completions take in an assistant message's `tool_calls`. It
 * answers a longer one 400 `string_above_max_length`: "Invalid 'messages[2].tool_calls[0].id': string
 * too long. Expected a string with maximum length 40, but got a string with length 43 instead."
 * (the API's body quoted in vercel/ai issue 5171; microsoft/autogen issue 6377). Reported as 40 in
 * 2025; an id of 51 was taken live in 2026 (vercel/ai PR 17233), and the Responses API's `call_id` is
 * held to 64: 64 here, which a Gemini id carrying its thought signature (hundreds) still exceeds.
 */
export const SIM_TOOL_CALL_ID_MAX = 64;

/** OpenAI's refusal of an over-long assistant tool-call id, in its words; undefined when every id fits. */
function toolCallIdTooLong(messages: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (const [i, m] of messages.entries()) {
    const calls = (m as { tool_calls?: unknown } | null)?.tool_calls;
    if (!Array.isArray(calls)) continue;
    for (const [j, c] of calls.entries()) {
      const id = (c as { id?: unknown } | null)?.id;
      if (typeof id !== 'string' || id.length <= SIM_TOOL_CALL_ID_MAX) continue;
      const param = `messages[${i}].tool_calls[${j}].id`;
      const message = `Invalid '${param}': string too long. Expected a string with maximum length ${SIM_TOOL_CALL_ID_MAX}, but got a string with length ${id.length} instead.`;
      return { error: { message, type: 'invalid_request_error', param, code: 'string_above_max_length' } };
    }
  }
  return undefined;
}

/** OpenAI chat completions, JSON and streamed, paced and broken by the knobs. */
export function chatRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.post('/v1/chat/completions', async (req: Request, res: Response) => {
    log.record(req, res);
    const body = req.body as Record<string, unknown>;
    const model = String(body.model ?? '');
    const tooLong = toolCallIdTooLong(body.messages);
    if (tooLong) return void res.status(400).json(tooLong);
    const k = knobs.take(model);
    if (await applyFaults(k, res)) return;
    if (isDecisionRequest(body) && body.stream !== true) {
      res.json(decisionCompletion(body, model, k));
      return;
    }
    const messages = (body.messages as Msg[]) ?? [];
    const prompt = messages.map((m) => contentText(m.content)).join('\n');
    // The latest user turn, or the tool result the model is answering (it then replies in text).
    const lastTurn = [...messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');
    const lastUser = contentText(lastTurn?.content);
    const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
    const userAt = messages.map((m) => m.role).lastIndexOf('user');
    const toolNames = ((body.tools as Tool[] | undefined) ?? []).map((t) => t.function?.name ?? '').filter(Boolean);
    const search =
      body.tool_choice === 'none' ? undefined : searchToolCall(toolNames, contentText(messages[userAt]?.content), messages.slice(userAt + 1).filter((m) => m.role === 'tool').length);
    const answer = lastTurn?.role === 'tool' ? answerFromToolResult(lastUser) : undefined;
    let words = answer ? answer.split(' ') : k.replyWords ?? replyWords(lastUser, k.outputWords ?? 12, maxTokens);
    if (maxTokens && words.length > maxTokens) words = words.slice(0, maxTokens);
    const tool =
      search?.name ?? (lastTurn?.role === 'tool' && typeof body.tool_choice !== 'object' && body.tool_choice !== 'required' ? undefined : pickTool(body, lastUser));
    const text = tool ? '' : words.join(' ');
    const toolArgs = tool ? JSON.stringify(search?.input ?? { query: lastUser.slice(0, 100) }) : '';
    const usage = {
      prompt_tokens: countTokens(prompt) + 3 * messages.length,
      completion_tokens: tool ? countTokens(toolArgs) + 5 : countTokens(text),
      total_tokens: 0,
    };
    const audio = audioUsage(body, messages, usage.completion_tokens);
    if (audio) {
      const textTokens = usage.completion_tokens;
      usage.prompt_tokens += audio.input;
      usage.completion_tokens += audio.output;
      Object.assign(usage, {
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: audio.input },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: audio.output, text_tokens: textTokens, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      });
    }
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    Object.assign(usage, k.usageExtra ?? {});
    const finish = tool ? 'tool_calls' : maxTokens && words.length >= maxTokens ? 'length' : 'stop';
    const id = `chatcmpl-sim${Date.now().toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    const toolCall = { id: 'call_sim1', type: 'function', function: { name: tool, arguments: toolArgs } };
    // `logprobs: true`: each word of the text is one token (`top_logprobs` alternatives, the token first)
    const wantLogprobs = body.logprobs === true && !k.noLogprobs && !tool;
    const top = typeof body.top_logprobs === 'number' ? body.top_logprobs : 0;
    const bytes = (t: string) => [...Buffer.from(t, 'utf8')];
    const tokenLogprob = (token: string, i: number) => {
      const logprob = -0.01 * (i + 1);
      const alts = Array.from({ length: top }, (_, j) => (j === 0 ? { token, logprob, bytes: bytes(token) } : { token: `alt${j}`, logprob: -1 - j, bytes: bytes(`alt${j}`) }));
      return { token, logprob, bytes: bytes(token), top_logprobs: alts };
    };
    const piece = (i: number) => (i === 0 ? words[0] : ` ${words[i]}`);
    const tier = servedTier(body.service_tier, k.servedTier, k.projectTier);

    if (body.stream !== true) {
      res.json({
        id,
        object: 'chat.completion',
        created,
        model,
        ...(tier ? { service_tier: tier } : {}),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: tool ? null : text, ...(k.reasoning ? { [k.reasoning.field]: k.reasoning.text } : {}), ...(tool ? { tool_calls: [toolCall] } : {}) },
            logprobs: wantLogprobs ? { content: words.map((_, i) => tokenLogprob(piece(i), i)), refusal: null } : null,
            finish_reason: finish,
          },
        ],
        usage,
      });
      return;
    }

    res.status(200).setHeader('Content-Type', 'text/event-stream');
    res.flushHeaders();
    const chunk = (delta: object, finishReason: string | null = null, logprobs: object | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...(tier ? { service_tier: tier } : {}), choices: [{ index: 0, delta, logprobs, finish_reason: finishReason }] })}\n\n`;
    const pieces: string[] = [chunk({ role: 'assistant', content: '' })];
    // the reasoning word by word, before the answer, as a reasoning model streams it
    if (k.reasoning) for (const w of k.reasoning.text.match(/\s*\S+/g) ?? []) pieces.push(chunk({ [k.reasoning.field]: w }));
    if (tool) {
      pieces.push(chunk({ tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: tool, arguments: '' } }] }));
      for (let i = 0; i < toolArgs.length; i += 8) pieces.push(chunk({ tool_calls: [{ index: 0, function: { arguments: toolArgs.slice(i, i + 8) } }] }));
    } else {
      words.forEach((_, i) => pieces.push(chunk({ content: piece(i) }, null, wantLogprobs ? { content: [tokenLogprob(piece(i), i)], refusal: null } : null)));
    }
    const opts = body.stream_options as { include_usage?: boolean } | undefined;
    if (k.usageInLastChunk) pieces.push(chunk({}, finish).replace(/\}\n\n$/, `,"usage":${JSON.stringify(usage)}}\n\n`));
    else pieces.push(chunk({}, finish));
    if (opts?.include_usage && !k.usageInLastChunk) pieces.push(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, ...(tier ? { service_tier: tier } : {}), choices: [], usage })}\n\n`);
    if (k.oneWrite) {
      res.end(`${pieces.join('')}data: [DONE]\n\n`);
      return;
    }
    for (let i = 0; i < pieces.length; i++) {
      if (res.destroyed) return;
      if (k.dropAfterChunks !== undefined && i >= k.dropAfterChunks) {
        await sleep(20); // let what was written reach the client, then cut the connection
        res.socket?.destroy();
        return;
      }
      res.write(pieces[i]);
      if (k.tokenDelayMs) await sleep(k.tokenDelayMs);
    }
    res.end('data: [DONE]\n\n');
  });
  return r;
}
