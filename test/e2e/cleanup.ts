// A setup file of the e2e and client suites: after each test file, its temporary directories
// (data directories with seal keys and root tokens) are removed, whether its tests passed or not.
import { afterAll } from 'vitest';
import { removeTempDirs } from './processes';

afterAll(removeTempDirs);
