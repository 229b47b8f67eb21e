import { DECISION_SCHEMA_NAME, type DecisionRequest, type QuestionPlan } from './types';

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export const SYSTEM_PROMPT = [
  'You answer typed questions about a state. Read the state once, then answer every question in "Questions".',
  'Question types:',
  '- noul: decide whether the proposition in "instructions" is true of the state ("criteria" may describe what true and false mean).',
  '  Answer {"answer": true|false, "probability": P} where P is your probability (0-1) that it is true.',
  '- choice: pick the option key from "options" that best fits. Answer {"choice": KEY, "probabilities": {KEY: P, ...}} over every option key.',
  '- score: pick the level index from "levels" that best fits. Answer {"level": INDEX, "probabilities": {"INDEX": P, ...}} over every level.',
  'Images are attached after the questions, each preceded by its placeholder such as [image 1].',
  'Reply with one JSON object keyed by question label (q1, q2, ...), matching the response schema exactly.',
].join('\n');

/** Default image cost in input tokens when the model's config does not say (one 512px tile + base). */
export const DEFAULT_IMAGE_TOKENS = 765;

export interface BuiltPrompt {
  /** The upstream chat-completions body without `model`. */
  body: Record<string, unknown>;
  plan: QuestionPlan[];
  /** Every text the model reads (system prompt, state, questions, placeholders), for token counting. */
  texts: string[];
  images: number;
  /** UTF-8 bytes of the state as sent (a string as is, an object or array as compact JSON). */
  stateBytes: number;
}

export interface PromptOptions {
  /** Ask for token log-probabilities (used to calibrate noul answers). */
  logprobs: boolean;
  /** The model's output cap, if any; the answer budget never exceeds it. */
  maxOutputTokens: number | null;
}

function isImageOption(v: unknown): v is { image: string; text?: string } {
  return !!v && typeof v === 'object' && !Array.isArray(v) && typeof (v as { image?: unknown }).image === 'string';
}

/** Replaces each image option with a numbered placeholder and collects its data URL. */
function withPlaceholders(v: unknown, images: string[]): unknown {
  if (Array.isArray(v)) return v.map((x) => withPlaceholders(x, images));
  if (isImageOption(v)) {
    images.push(v.image);
    return { image: `[image ${images.length}]`, ...(v.text !== undefined ? { text: v.text } : {}) };
  }
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, withPlaceholders(x, images)]));
  return v;
}

const probabilityMap = (keys: string[]) => ({
  type: 'object',
  properties: Object.fromEntries(keys.map((k) => [k, { type: 'number' }])),
  required: keys,
  additionalProperties: false,
});

/** The JSON schema of one question's answer (OpenAI strict structured outputs). */
function answerSchema(q: QuestionPlan): Record<string, unknown> {
  if (q.type === 'noul') {
    return { type: 'object', properties: { answer: { type: 'boolean' }, probability: { type: 'number' } }, required: ['answer', 'probability'], additionalProperties: false };
  }
  if (q.type === 'choice') {
    return { type: 'object', properties: { choice: { type: 'string', enum: q.options }, probabilities: probabilityMap(q.options!) }, required: ['choice', 'probabilities'], additionalProperties: false };
  }
  const levels = Object.keys(q.legend!);
  return {
    type: 'object',
    properties: { level: { type: 'integer', enum: levels.map(Number) }, probabilities: probabilityMap(levels) },
    required: ['level', 'probabilities'],
    additionalProperties: false,
  };
}

/** Output tokens an answer of this question may take; the request's cap is their sum. */
function answerBudget(q: QuestionPlan): number {
  if (q.type === 'noul') return 24;
  const n = q.type === 'choice' ? q.options!.length : Object.keys(q.legend!).length;
  return 24 + n * 16;
}

/**
 * Builds the one upstream chat request of a decision call: the state is sent once, then every
 * question (by label), then the image attachments; structured output is requested with a schema
 * that names every question, option and level.
 */
export function buildDecisionPrompt(req: DecisionRequest, opts: PromptOptions): BuiltPrompt {
  const stateText = typeof req.state === 'string' ? req.state : JSON.stringify(req.state);
  const attachments: string[] = [];
  const plan: QuestionPlan[] = [];
  const forModel: Record<string, unknown> = {};
  Object.entries(req.questions).forEach(([id, q], i) => {
    const label = `q${i + 1}`;
    const p: QuestionPlan = { id, label, type: q.type };
    const entry: Record<string, unknown> = { type: q.type, instructions: withPlaceholders(q.instructions, attachments) };
    if (q.type === 'noul' && q.criteria !== undefined) entry.criteria = withPlaceholders(q.criteria, attachments);
    if (q.type === 'choice') {
      const options = q.criteria as Record<string, unknown>;
      p.options = Object.keys(options);
      entry.options = withPlaceholders(options, attachments);
    }
    if (q.type === 'score') {
      const levels = q.criteria as unknown[];
      p.legend = Object.fromEntries(levels.map((l, n) => [String(n), l]));
      entry.levels = p.legend;
    }
    forModel[label] = entry;
    plan.push(p);
  });

  const texts = [SYSTEM_PROMPT, `State:\n${stateText}`];
  const parts: Part[] = [{ type: 'text', text: texts[1] }];
  const stateImage = req.images?.[0];
  if (stateImage) {
    texts.push('[state image]');
    parts.push({ type: 'text', text: '[state image]' }, { type: 'image_url', image_url: { url: stateImage } });
  }
  const questionsText = `Questions:\n${JSON.stringify(forModel)}`;
  texts.push(questionsText);
  parts.push({ type: 'text', text: questionsText });
  attachments.forEach((url, i) => {
    const tag = `[image ${i + 1}]`;
    texts.push(tag);
    parts.push({ type: 'text', text: tag }, { type: 'image_url', image_url: { url } });
  });

  const budget = 16 + plan.reduce((s, q) => s + answerBudget(q), 0);
  const maxTokens = opts.maxOutputTokens ? Math.min(opts.maxOutputTokens, budget) : budget;
  const wantsLogprobs = opts.logprobs && plan.some((q) => q.type === 'noul');
  const body: Record<string, unknown> = {
    messages: [
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: parts },
    ],
    temperature: 0,
    max_tokens: maxTokens,
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: DECISION_SCHEMA_NAME,
        strict: true,
        schema: {
          type: 'object',
          properties: Object.fromEntries(plan.map((q) => [q.label, answerSchema(q)])),
          required: plan.map((q) => q.label),
          additionalProperties: false,
        },
      },
    },
    ...(wantsLogprobs ? { logprobs: true, top_logprobs: 5 } : {}),
  };
  return { body, plan, texts, images: (stateImage ? 1 : 0) + attachments.length, stateBytes: Buffer.byteLength(stateText) };
}
