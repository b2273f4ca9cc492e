// Control notices to the gateway (close sockets), sent after COMMIT. Best effort: the change
// is already committed, and a lost notice only delays what the next request checks anyway.
import type { Deps } from '../../deps.js';
import type { ControlMessage } from '../../platform/bus/index.js';

export async function publishControl(deps: Deps, msg: ControlMessage): Promise<void> {
  try {
    await deps.bus.publishControl(msg);
  } catch (err) {
    deps.log.warn({ control: msg.type, err: err instanceof Error ? err.message : String(err) }, 'control notice lost');
  }
}
