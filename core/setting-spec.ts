/** The shape of one setting (core/settings.ts lists them all). */
export type SettingType = 'string' | 'int' | 'bool' | { enum: readonly string[] };

export interface SettingSpec {
  /** Key in the config file and in the Config object. */
  readonly key: string;
  readonly env: string;
  readonly flag: string;
  readonly type: SettingType;
  /** undefined means "unset" (only for optional settings such as the API key). */
  readonly defaultValue: string | number | boolean | undefined;
  readonly doc: string;
  /** Inclusive bounds for integers. */
  readonly min?: number;
  readonly max?: number;
  /** Kept out of logs and `--help` output values. */
  readonly secret?: boolean;
}
