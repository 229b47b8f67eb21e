/**
 * Whether this process is draining (SIGTERM received): `/readyz` answers 503 from then on so that a
 * load balancer stops sending it work while it finishes what it has.
 */
let draining = false;

export function markDraining(): void {
  draining = true;
}

export function isDraining(): boolean {
  return draining;
}
