// The engine settings as write handlers see them: read from storage once, then kept. Sound because
// the host runs a mount's writes one at a time and every change of the settings is such a write,
// which drops the copy (a change that then fails to commit only means the next write reads
// storage again). Reads run beside writes, so they read storage themselves.

import type { Storage } from '../../../framework/storage';
import type { EngineConfig } from './model';
import { readConfig, writeConfig } from './store';

export class ConfigCache {
  private kept: EngineConfig | null = null;

  /** The settings, for a write handler (a copy it may change). */
  async forWrite(storage: Storage): Promise<EngineConfig> {
    this.kept ??= await readConfig(storage);
    return { ...this.kept };
  }

  async save(storage: Storage, config: EngineConfig): Promise<void> {
    this.kept = null;
    await writeConfig(storage, config);
  }
}
