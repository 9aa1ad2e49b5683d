export * from './build.ts';
export * from './store.ts';
export * from './types.ts';
export * from './diff.ts';
export * from './digest.ts';
export * from './packed.ts';
