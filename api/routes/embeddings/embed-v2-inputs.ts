import { invalid, kindOf } from './errors';

/** Cohere's cap on `texts` and on `inputs` ("Maximum number of ... per call is `96`"). */
const COHERE_MAX_INPUTS = 96;

/** How an input's text parts become the one text embedded for it. */
export const TEXT_PART_SEPARATOR = '\n';

/** The texts a v2 embed request asks for, and the field that carried them (errors name it). */
export interface EmbedV2Texts {
  texts: string[];
  field: 'texts' | 'inputs';
}

/**
 * The texts of Cohere's v2 embed request: `texts` (1 to 96 non-empty strings) or `inputs` (1 to 96
 * `{content: [{type: 'text', text}]}`, the shape Cohere's own examples send; one embedding an input,
 * its text parts embedded as one text joined by a newline). Not both. An `image_url` part, like
 * `images`, is refused: the gateway embeds text. Every refusal is 400 naming the field.
 */
export function embedV2Texts(body: Record<string, unknown>, version: 1 | 2): EmbedV2Texts {
  const given = body.inputs != null;
  if (given && body.texts != null) throw invalid('invalid_input', "'texts' and 'inputs' are both given; send one of them.");
  if (!given) return { texts: checkedTexts(body.texts, version), field: 'texts' };
  const inputs = body.inputs;
  if (!Array.isArray(inputs)) throw invalid('invalid_input', `'inputs' must be an array of {content: [...]}, not ${kindOf(inputs)}.`);
  checkCount('inputs', inputs.length);
  return { texts: inputs.map((input, i) => inputText(input, i)), field: 'inputs' };
}

function checkedTexts(texts: unknown, version: 1 | 2): string[] {
  const either = version === 2 ? " (or 'inputs')" : '';
  if (!Array.isArray(texts)) throw invalid('invalid_input', `'texts'${either} is required and must be an array of strings${texts == null ? '' : `, not ${kindOf(texts)}`}.`);
  checkCount('texts', texts.length);
  for (let i = 0; i < texts.length; i++) {
    if (typeof texts[i] !== 'string') throw invalid('invalid_input', `'texts[${i}]' must be a string, not ${kindOf(texts[i])}.`);
    if ((texts[i] as string).length === 0) throw invalid('invalid_input', `'texts[${i}]' must not be an empty string.`);
  }
  return texts as string[];
}

function checkCount(field: string, n: number): void {
  if (n === 0) throw invalid('invalid_input', `'${field}' must not be empty.`);
  if (n > COHERE_MAX_INPUTS) throw invalid('batch_too_large', `'${field}' has ${n} items; Cohere's embed takes at most ${COHERE_MAX_INPUTS} per request.`);
}

/** One input's text: its text parts, in order, joined. */
function inputText(input: unknown, i: number): string {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('invalid_input', `'inputs[${i}]' must be an object with a 'content' array, not ${kindOf(input)}.`);
  const content = (input as { content?: unknown }).content;
  if (!Array.isArray(content)) throw invalid('invalid_input', `'inputs[${i}].content' must be an array of text parts${content === undefined ? '' : `, not ${kindOf(content)}`}.`);
  if (content.length === 0) throw invalid('invalid_input', `'inputs[${i}].content' must not be empty.`);
  const parts: string[] = [];
  for (let j = 0; j < content.length; j++) {
    const part = content[j] as { type?: unknown; text?: unknown } | null;
    const where = `inputs[${i}].content[${j}]`;
    const type = typeof part === 'object' && part !== null ? part.type : undefined;
    if (type === 'image_url') throw invalid('invalid_input', `'${where}' is an image: the gateway embeds text only; send text parts.`);
    if (type !== 'text') throw invalid('invalid_input', `'${where}.type' must be 'text'${type === undefined ? '' : `, not ${typeof type === 'string' ? JSON.stringify(type.slice(0, 64)) : kindOf(type)}`}.`);
    const text = part!.text;
    if (typeof text !== 'string' || text.length === 0) throw invalid('invalid_input', `'${where}.text' must be a non-empty string.`);
    parts.push(text);
  }
  return parts.join(TEXT_PART_SEPARATOR);
}
