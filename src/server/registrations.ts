// The registrations (organizations, apps, agents, their tokens): read from the database into the directory the
// core checks, and read again when another node changed them.
import type { ControlHandlers } from '../cluster/control-handlers.js';
import { Directory } from '../core/directory.js';
import type { RegistryStore } from '../store/registry.js';
import type { Service } from './services.js';
import type { TokenExpiries } from './token-expiries.js';

export function registrations(store: RegistryStore): Service<Directory> {
  return {
    name: 'registrations',
    async start() {
      const directory = new Directory();
      await store.load(directory);
      return directory;
    },
  };
}

/** Another node changed the registrations: this node reads them again, and expires the tokens that came with them. */
export function registrationHandlers(
  store: RegistryStore,
  directory: Directory,
  expiries: TokenExpiries,
): Pick<ControlHandlers, 'directory'> {
  return {
    async directory() {
      const fresh = new Directory();
      await store.load(fresh);
      directory.replaceContents(fresh);
      expiries.offer(directory);
    },
  };
}
