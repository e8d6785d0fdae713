// What the emulated Cloud KMS holds, per project (each test file uses projects of its own, so
// files running side by side never meet): key rings by location, crypto keys, their versions and
// key pairs; and per project the call log and the scripted faults.
import type { KeyObject } from 'node:crypto';
import { GcpError } from './errors';
import { generate, type Algorithm } from './keys';
import type { CallRecord, FaultSpec, ProjectState } from './types';

export interface Version {
  name: string;
  state: string;
  algorithm: string;
  protectionLevel: string;
  createTime: string;
  generateTime?: string;
  privateKey?: KeyObject;
  publicPem?: string;
}

export interface CryptoKey {
  name: string;
  purpose: string;
  createTime: string;
  algorithm: string;
  protectionLevel: string;
  versions: Version[];
}

export interface KeyRing {
  name: string;
  createTime: string;
  cryptoKeys: Map<string, CryptoKey>;
}

interface PendingFault {
  spec: FaultSpec;
  skip: number;
  left: number;
}

export class Project {
  /** Key rings by their full name (projects/<p>/locations/<l>/keyRings/<r>). */
  readonly keyRings = new Map<string, KeyRing>();
  calls: CallRecord[] = [];
  private faults: PendingFault[] = [];
  generationDelayMs = 200;

  constructor(readonly id: string) {}

  reset(generationDelayMs = 200): void {
    this.keyRings.clear();
    this.calls = [];
    this.faults = [];
    this.generationDelayMs = generationDelayMs;
  }

  setFaults(specs: FaultSpec[]): void {
    this.faults = specs.map((spec) => {
      const skip = spec.after ?? 0;
      const left = spec.times ?? 1;
      const valid = typeof spec.rpc === 'string' && Number.isInteger(skip) && skip >= 0 && Number.isInteger(left) && left >= 1;
      if (!valid || (!spec.corrupt && (typeof spec.status !== 'number' || typeof spec.code !== 'string'))) throw new Error(`bad fault: ${JSON.stringify(spec)}`);
      return { spec, skip, left };
    });
  }

  pendingFaults(): FaultSpec[] {
    return this.faults.map((f) => ({ ...f.spec, after: f.skip, times: f.left }));
  }

  /** The fault due for this call of `rpc`, if any (each matching entry counts the call). */
  faultFor(rpc: string): FaultSpec | undefined {
    let hit: FaultSpec | undefined;
    for (const f of this.faults) {
      if (f.spec.rpc !== rpc && f.spec.rpc !== '*') continue;
      if (f.skip > 0) f.skip--;
      else if (!hit) {
        hit = f.spec;
        f.left--;
      }
    }
    this.faults = this.faults.filter((f) => f.left > 0);
    return hit;
  }

  /** A version in PENDING_GENERATION that becomes ENABLED once its key pair exists and the delay passed. */
  startVersion(key: CryptoKey, alg: Algorithm): Version {
    const v: Version = {
      name: `${key.name}/cryptoKeyVersions/${key.versions.length + 1}`,
      state: 'PENDING_GENERATION',
      algorithm: key.algorithm,
      protectionLevel: key.protectionLevel,
      createTime: new Date().toISOString(),
    };
    key.versions.push(v);
    const delay = new Promise((resolve) => setTimeout(resolve, this.generationDelayMs));
    void Promise.all([generate(alg), delay]).then(
      ([pair]) => {
        v.privateKey = pair.privateKey;
        v.publicPem = pair.publicPem;
        v.generateTime = new Date().toISOString();
        if (v.state === 'PENDING_GENERATION') v.state = 'ENABLED';
      },
      (e: unknown) => {
        v.state = 'GENERATION_FAILED';
        console.error('gcp-kms emulator: key generation failed', e);
      },
    );
    return v;
  }

  snapshot(): ProjectState {
    return {
      keyRings: [...this.keyRings.values()].map((r) => ({
        name: r.name,
        cryptoKeys: [...r.cryptoKeys.values()].map((k) => ({
          name: k.name,
          purpose: k.purpose,
          algorithm: k.algorithm,
          protectionLevel: k.protectionLevel,
          versions: k.versions.map((v) => ({ name: v.name, state: v.state, algorithm: v.algorithm, protectionLevel: v.protectionLevel, publicKeyPem: v.publicPem ?? null })),
        })),
      })),
    };
  }
}

export class World {
  private readonly projects = new Map<string, Project>();

  project(id: string): Project {
    let p = this.projects.get(id);
    if (!p) this.projects.set(id, (p = new Project(id)));
    return p;
  }

  /** Sets a version's state (DISABLED, DESTROYED, ...), as the console would. */
  setVersionState(project: string, name: string, state: string): void {
    for (const ring of this.project(project).keyRings.values()) {
      for (const key of ring.cryptoKeys.values()) {
        const v = key.versions.find((x) => x.name === name);
        if (v) {
          v.state = state;
          return;
        }
      }
    }
    throw new GcpError('NOT_FOUND', `CryptoKeyVersion ${name} not found.`);
  }
}
