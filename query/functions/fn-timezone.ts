/**
 * timezone(zone, x), what `x AT TIME ZONE zone` means: a timestamptz becomes the wall-clock
 * timestamp in the zone; a timestamp is read as wall-clock time in the zone, giving a timestamptz.
 * The zone is a text (see zoneOffsetSec) or an interval offset east of Greenwich.
 */
import type { Interval, QValue } from '../types/contract.js';
import { checkTimestamp, isFiniteTimestamp, USECS_PER_SEC, zoneOffsetSec } from '../types/datetime.js';
import { dataError } from '../types/errors.js';
import { formatInterval } from '../types/interval.js';
import { T } from '../types/qtype.js';
import type { FnDef, Impl } from './registry.js';

const USECS_PER_SEC_N = Number(USECS_PER_SEC);

function intervalOffsetUs(v: Interval): bigint {
  if (v.months !== 0 || v.days !== 0) throw dataError(`interval time zone "${formatInterval(v)}" must not include months or days`, '22023');
  return v.micros;
}

/** timestamptz -> local timestamp in the zone. */
const toLocal =
  (offsetUs: (zone: QValue, utcUs: bigint) => bigint): Impl =>
  ([zone, v]) => {
    const utc = v as bigint;
    return isFiniteTimestamp(utc) ? checkTimestamp(utc + offsetUs(zone!, utc)) : utc;
  };

/** local timestamp in the zone -> timestamptz. */
const fromLocal =
  (offsetUs: (zone: QValue, localUs: bigint) => bigint): Impl =>
  ([zone, v]) => {
    const local = v as bigint;
    return isFiniteTimestamp(local) ? checkTimestamp(local - offsetUs(zone!, local)) : local;
  };

const textOffsetAtUtc = (zone: QValue, utcUs: bigint): bigint => BigInt(zoneOffsetSec(zone as string, { utcUs }) * USECS_PER_SEC_N);
const textOffsetAtLocal = (zone: QValue, localUs: bigint): bigint => BigInt(zoneOffsetSec(zone as string, { localUs }) * USECS_PER_SEC_N);
const intervalOffset = (zone: QValue): bigint => intervalOffsetUs(zone as Interval);

export const TIMEZONE_FN_DEFS: readonly FnDef[] = [
  { name: 'timezone', params: [T.text, T.timestamptz], ret: T.timestamp, make: () => toLocal(textOffsetAtUtc) },
  { name: 'timezone', params: [T.text, T.timestamp], ret: T.timestamptz, make: () => fromLocal(textOffsetAtLocal) },
  { name: 'timezone', params: [T.interval, T.timestamptz], ret: T.timestamp, make: () => toLocal(intervalOffset) },
  { name: 'timezone', params: [T.interval, T.timestamp], ret: T.timestamptz, make: () => fromLocal(intervalOffset) },
];
