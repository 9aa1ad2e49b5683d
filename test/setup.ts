import { afterAll } from 'vitest';
import { removeTempDirs } from './helpers/temp.ts';

afterAll(removeTempDirs);
