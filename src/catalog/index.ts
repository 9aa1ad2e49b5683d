export * from './catalog.ts';
export * from './namespace.ts';
export * from './uri.ts';
export * from './visibility.ts';
