import { ApiError } from '../../../shared/errors/ApiError';
import { partOf, refuseUntranslatable, THINKING_BUDGET } from './refuse';
import { toolUse, type ToolUse } from '../tool-choice';
import { parseCallId } from './call-ids';
import { isFailedResult } from '../tool-results';

type Part = Record<string, unknown>;
type Content = { role: 'user' | 'model'; parts: Part[] };
type CPart = Record<string, unknown> & { type: string };
type CMessage = { role: string; content?: string | CPart[] | null; tool_calls?: Array<{ id: string; function: { name: string; arguments?: string } }>; tool_call_id?: string; is_error?: unknown };
type CTool = { type: string; function?: { name: string; description?: string; parameters?: unknown } };

function partsOf(content: CMessage['content'], field: string): Part[] {
  if (content == null || content === '') return [];
  if (typeof content === 'string') return [{ text: content }];
  return content.map((p, i) => partOf(p, `${field}[${i}]`));
}

function textOf(content: CMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((p) => (p.type === 'text' ? String(p.text ?? '') : '')).join('\n');
}

/** Tool-call arguments as the object functionCall.args needs; broken JSON is kept under `_raw`. */
function parseArguments(args: string | undefined): Record<string, unknown> {
  try {
    const v = JSON.parse(args || '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { _raw: args };
  }
}

/**
 * A tool message's text as a functionResponse `response`: the API's documented `output` key, or
 * `error` for a failed result ("Use "output" key to specify function output and "error" key to
 * specify error details": FunctionResponse.response, @google/genai).
 */
function toolResponse(m: CMessage): Record<string, unknown> {
  return isFailedResult(m) ? { error: textOf(m.content) } : { output: textOf(m.content) };
}

/**
 * The thought signature Google documents for function calls Gemini did not write ("You can set the
 * following dummy signatures of either "context_engineering_is_the_way_to_go" or
 * "skip_thought_signature_validator" in the thought signature field to skip validation":
 * ai.google.dev/gemini-api/docs/thought-signatures, FAQs; Vertex AI's guide names only this one:
 * "you can set thought_signature to skip_thought_signature_validator",
 * cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures). Sent as the literal string, not
 * base64 of it, which the API takes for a signature and refuses ("Thought signature is not valid":
 * langchain-ai/langchain-google#1570, fixed by sending the literal string, #1972).
 */
const FOREIGN_CALL_SIGNATURE = 'skip_thought_signature_validator';

/**
 * Each model step's first functionCall part (the one Gemini 3 requires a thoughtSignature on, in each
 * step of the current turn: everything after the last user text) gets the documented placeholder when it
 * carries no signature of its own: a call another kind made (a mixed pool, a fallback, a caller moving
 * the conversation between models), or one the caller wrote. Gemini validates signatures in the
 * current turn only, so the placeholder on an earlier turn's step changes nothing there, and every
 * step gets it (no turn boundary to find; pydantic-ai's Gemini model does the same). A signature
 * Gemini sent (carried in the call's id) stays as it came.
 */
function signFirstCalls(contents: Content[]): void {
  for (const c of contents) {
    const first = c.role === 'model' ? c.parts.find((p) => p.functionCall) : undefined;
    if (first && !first.thoughtSignature) first.thoughtSignature = FOREIGN_CALL_SIGNATURE;
  }
}

/**
 * Canonical messages → systemInstruction + contents. A tool result finds its call's function name
 * through the tool_call_id of the assistant turn that made the call, and answers go back in the calls'
 * order. A call id that is not one the gateway minted (Gemini's `functionCall.id`) goes back as the
 * call's `id` and its result's `functionResponse.id`; a thought signature carried in the id goes
 * back on its call (Gemini 3 requires it on the function calls of the current turn).
 */
function contents(messages: CMessage[]): { system?: Content; contents: Content[] } {
  const system: string[] = [];
  const out: Content[] = [];
  const names = new Map<string, string>();
  const push = (role: Content['role'], parts: Part[]) => {
    if (!parts.length) return;
    const last = out.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  };
  messages.forEach((m, i) => {
    const field = `messages[${i}].content`;
    if (m.role === 'system' || m.role === 'developer') system.push(textOf(m.content));
    else if (m.role === 'user') push('user', partsOf(m.content, field));
    else if (m.role === 'tool') {
      const name = names.get(String(m.tool_call_id));
      if (!name) throw new ApiError(400, 'invalid_request', `messages[${i}].tool_call_id does not match a tool call of an earlier assistant message.`, { param: `messages[${i}].tool_call_id` });
      const { upstreamId } = parseCallId(String(m.tool_call_id));
      push('user', [{ functionResponse: { ...(upstreamId ? { id: upstreamId } : {}), name, response: toolResponse(m) } }]);
    } else if (m.role === 'assistant') {
      const parts = partsOf(m.content, field);
      for (const c of m.tool_calls ?? []) {
        names.set(c.id, c.function.name);
        const { upstreamId, signature: sig } = parseCallId(c.id);
        parts.push({ functionCall: { ...(upstreamId ? { id: upstreamId } : {}), name: c.function.name, args: parseArguments(c.function.arguments) }, ...(sig ? { thoughtSignature: sig } : {}) });
      }
      push('model', parts);
    } else throw new ApiError(400, 'invalid_request', `Message role '${m.role}' is not supported on this model.`);
  });
  const instruction: Content | undefined = system.length ? { role: 'user', parts: [{ text: system.join('\n\n') }] } : undefined;
  // Gemini needs contents; a chat of system messages alone (valid on OpenAI) is that text as the user's turn.
  if (!out.length && instruction) return { contents: [instruction] };
  signFirstCalls(out);
  return { system: instruction, contents: out };
}

function toolConfig(choice: ToolUse<CTool>['choice']): Record<string, unknown> | undefined {
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  if (choice) return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.named] } };
  return undefined;
}

function generationConfig(body: Record<string, unknown>): Record<string, unknown> {
  const g: Record<string, unknown> = {};
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number') g.maxOutputTokens = max;
  if (typeof body.temperature === 'number') g.temperature = body.temperature;
  if (typeof body.top_p === 'number') g.topP = body.top_p;
  if (typeof body.top_k === 'number') g.topK = body.top_k;
  if (typeof body.seed === 'number') g.seed = body.seed;
  if (typeof body.presence_penalty === 'number') g.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === 'number') g.frequencyPenalty = body.frequency_penalty;
  if (typeof body.n === 'number' && body.n > 1) g.candidateCount = body.n;
  if (body.logprobs === true) {
    g.responseLogprobs = true;
    if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0) g.logprobs = body.top_logprobs;
  }
  const stop = body.stop;
  if (typeof stop === 'string') g.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length) g.stopSequences = stop;
  const rf = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (rf?.type === 'json_object') g.responseMimeType = 'application/json';
  else if (rf?.type === 'json_schema') {
    g.responseMimeType = 'application/json';
    if (rf.json_schema?.schema) g.responseJsonSchema = rf.json_schema.schema;
  }
  const effort = body.reasoning_effort;
  if (typeof effort === 'string') {
    const budget = THINKING_BUDGET[effort]; // a value without one was refused (refuseUntranslatable)
    g.thinkingConfig = budget === 0 ? { thinkingBudget: 0 } : { thinkingBudget: budget, includeThoughts: true };
  }
  return g;
}

/**
 * A canonical chat request → a Gemini generateContent request body (the model is in the URL).
 * Tool parameters and the JSON schema go as JSON Schema (`parametersJsonSchema`,
 * `responseJsonSchema`), unchanged, rather than through the OpenAPI subset of `parameters` and
 * `responseSchema`, which refuses keywords such as `additionalProperties`. `n` is `candidateCount`,
 * `logprobs: true` `responseLogprobs` and `top_logprobs` (above 0) `logprobs`.
 */
export function canonicalToGemini(body: Record<string, unknown>): Record<string, unknown> {
  refuseUntranslatable(body);
  const { system, contents: c } = contents((body.messages as CMessage[]) ?? []);
  const out: Record<string, unknown> = { contents: c };
  if (system) out.systemInstruction = system;
  const tools = body.tools as CTool[] | undefined;
  if (tools?.length) {
    const use = toolUse(tools, body.tool_choice);
    out.tools = [
      {
        functionDeclarations: use.tools.map((t) => ({
          name: t.function!.name,
          ...(t.function!.description ? { description: t.function!.description } : {}),
          ...(t.function!.parameters ? { parametersJsonSchema: t.function!.parameters } : {}),
        })),
      },
    ];
    const tc = toolConfig(use.choice);
    if (tc) out.toolConfig = tc;
  }
  const g = generationConfig(body);
  if (Object.keys(g).length) out.generationConfig = g;
  return out;
}
