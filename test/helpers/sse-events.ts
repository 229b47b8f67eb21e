import { env } from './harness';

export interface SseEvent {
  event: string | undefined;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Parses a whole SSE body into named events with JSON data. */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      const raw = data.join('\n');
      try {
        return { event, data: JSON.parse(raw) };
      } catch {
        return { event, data: raw }; // e.g. the chat-completions `[DONE]`
      }
    });
}

/** POSTs JSON to the test gateway and reads the whole event stream. */
export async function postSse(path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; contentType: string | null; headers: Headers; events: SseEvent[]; text: string }> {
  const res = await fetch(`${env().gw.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  const ok = res.headers.get('content-type')?.startsWith('text/event-stream');
  return { status: res.status, contentType: res.headers.get('content-type'), headers: res.headers, events: ok ? parseSse(text) : [], text };
}
