/** A configuration that cannot work; its message names the variable to change. */
export class ConfigError extends Error {}
