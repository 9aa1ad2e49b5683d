export * from './discover.ts';
export * from './frontmatter.ts';
export * from './limits.ts';
export * from './paths.ts';
export * from './publish.ts';
export * from '../shared/reasons.ts';
export * from './validate.ts';
export * from './lfs.ts';
