/**
 * A bench request's messages: one short prompt, or a conversation of about `bytes` (turns of about
 * 800 characters): a long chat's request body (AB_PROMPT_BYTES in bench:ab, BENCH_PROMPT_BYTES in bench).
 */
export function conversation(bytes: number): Array<{ role: string; content: string }> {
  if (!(bytes > 0)) return [{ role: 'user', content: 'benchmark prompt with a few words' }];
  const turn = 'Some conversation text, a sentence or two about the code at hand. '.repeat(12);
  return Array.from({ length: Math.max(1, Math.round(bytes / (turn.length + 30))) }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: turn }));
}
