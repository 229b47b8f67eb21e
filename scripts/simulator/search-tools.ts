/**
 * How the simulated chat models use an offered search or fetch tool (the gateway offers them as
 * ordinary function tools named `web_search` / `web_fetch` when it intercepts native search): the
 * latest user message asking to search or fetch gets a tool call; a tool result is answered with
 * text that quotes the first result's URL, so the gateway can cite it. A user message that says
 * "keep searching" makes the model search again after every result (to exercise turn caps); "fetch …
 * joining A and B" makes it fetch the URL A+B, one it made up.
 */
export interface SimToolCall {
  name: string;
  input: Record<string, string>;
}

const URL_RE = /https?:\/\/[^\s"'<>\])]+/;

function offered(names: string[], kind: 'search' | 'fetch'): string | undefined {
  return names.find((n) => n === `web_${kind}`) ?? names.find((n) => n.toLowerCase().includes(kind));
}

/** The search or fetch call the model makes, if the user asked for one and the tool is offered. */
export function searchToolCall(names: string[], lastUser: string, toolResultsSoFar: number): SimToolCall | undefined {
  const again = /\bkeep searching\b/i.test(lastUser);
  if (toolResultsSoFar > 0 && !again) return undefined;
  // "joining A and B": the model builds the URL from pieces (as a prompt-injected model would), a URL no message holds
  const joined = /\bjoining (\S+) and (\S+)/i.exec(lastUser);
  const url = joined ? joined[1] + joined[2] : URL_RE.exec(lastUser)?.[0].replace(/[.,;:!?]+$/, '');
  const fetchTool = offered(names, 'fetch');
  if (fetchTool && url && /\bfetch\b/i.test(lastUser) && toolResultsSoFar === 0) return { name: fetchTool, input: { url } };
  const searchTool = offered(names, 'search');
  if (!searchTool || !/\b(search|look up)\b/i.test(lastUser)) return undefined;
  const m = /\b(?:search|look up)\b(?:\s+the web)?(?:\s+for)?\s+(.+)/i.exec(lastUser);
  const query = (m?.[1] ?? lastUser).replace(/\s*(?:and\s+)?keep searching\b/i, '').trim().slice(0, 200) || lastUser.slice(0, 200);
  return { name: searchTool, input: { query: toolResultsSoFar ? `${query} (${toolResultsSoFar + 1})` : query } };
}

/** The answer to a tool result: quotes the first URL and the words after it, or echoes the result. */
export function answerFromToolResult(result: string): string | undefined {
  const m = URL_RE.exec(result);
  if (!m) return undefined;
  const after = result.slice(m.index + m[0].length).replace(/\s+/g, ' ').trim().split(' ').slice(0, 12).join(' ');
  return `According to ${m[0]}: ${after}`.trim();
}
