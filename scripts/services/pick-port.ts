import net from 'net';
import { freePort } from './free-port';

/** Whether nothing listens on `port` (any interface), checked by listening on it for a moment. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, () => s.close(() => resolve(true)));
  });
}

/**
 * The port for something `npm start` runs itself: the variable's value when the operator set it (a
 * clash then ends the start with a one-line error naming it), else `preferred`, else any free port.
 */
export async function pickPort(variable: string, preferred: number): Promise<number> {
  const given = process.env[variable];
  if (given !== undefined && given !== '') return Number(given);
  return (await isFree(preferred)) ? preferred : freePort();
}
