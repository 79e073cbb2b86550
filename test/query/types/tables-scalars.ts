/** Expression tables for the differential tests: numbers, text, booleans, aggregates. */
import type { AggCase } from './aggregates-oracle.js';

export const INTEGER = [
  '1 + 2', '2147483647 + 1', '-2147483648 - 1', '2147483647::int8 + 1', '9223372036854775807 + 1', '-9223372036854775808 - 1',
  '7 / 2', '-7 / 2', '7 % 3', '-7 % 3', '7 % -3', '1 / 0', '1 % 0', '(-2147483648) / (-1)', '(-2147483648)::int4 % (-1)::int4',
  '3::int2 + 4::int2', '32767::int2 + 1::int2', '3::int2 * 4', '3::int2 + 4::int8', '1::int4 + 1::int8',
  '-(-2147483648)', '-(-32768)::int2', '46341 * 46341', '3037000500::int8 * 3037000500', '10 * 2.5', '1 + 1.5',
  '5 & 3', '5 | 3', '5 # 3', '~5', '1 << 4', '-16 >> 2', '1::int8 << 62', '1::int2 << 15', '1::int2 << 16', '1 << 31', '1 << 32',
  '1::int8 << 63', '1::int8 << 64', '~5::int2', '5::int2 & 3', '5::int2 & 3::int2', '-1::int8 >> 70', '@ -5', '@ -2.5',
  "' 42 '::int4", "'abc'::int4", "'2147483648'::int4", "'-32769'::int2", "'12.5'::int4", "''::int4", "'+7'::int8",
  '2.5::int4', '3.5::int4', '-2.5::int4', '2.5::float8::int4', '3.5::float8::int4', '-2.5::float8::int4', '1e10::int4',
  "'NaN'::float8::int4", "'NaN'::numeric::int4", "'Infinity'::numeric::int8", '2147483647.5::int4', '9223372036854775807.5::int8',
  'abs(-5)', 'abs(-2147483648)', 'mod(7, 3)', 'mod(-7, 3)', 'gcd(12, 18)', 'lcm(4, 6)', 'div(7.5, 2)',
  'true::int4', '0::bool', '5::bool', "'yes'::bool", "'off'::bool", "' t '::bool", "'maybe'::bool", "'o'::bool",
];

export const NUMERIC = [
  '1::numeric / 3', '2::numeric / 3', '10::numeric / 4', '1.0 / 3', '1 / 3.000', '100::numeric / 7', '1::numeric / 7000000',
  '123456789012345678901234567890::numeric / 7', '0.000001::numeric / 3', '1 / 0.0', '0::numeric / 5',
  '1.10 + 2.205', '1.5 - 2.25', '1.50 * 2.0', '-0.5 * 0.5', '12345678901234567890123456789012345678901 + 1',
  '99999999999999999999999999999999999999.99 * 99999999999999999999999999999999999999.99',
  '-123.456 % 10', '10.5 % 3', '5 % 0.0', "'NaN'::numeric + 1", "'Infinity'::numeric - 'Infinity'::numeric",
  "'Infinity'::numeric * 0", "'Infinity'::numeric / 2", "1 / 'Infinity'::numeric", "'-inf'::numeric", "' 1.50 '::numeric",
  "'1e5'::numeric", "'1.5e-3'::numeric", "'abc'::numeric", "'.5'::numeric", "'5.'::numeric", "'-0'::numeric", "'-0.00'::numeric",
  '1.005::numeric(10,2)', '-1.005::numeric(10,2)', '123.45::numeric(4,1)', '12345.6::numeric(5,1)', '0.5::numeric(1,0)',
  "'NaN'::numeric(5,2)", "'Infinity'::numeric(5,2)", '1234::numeric(2,-2)', '0.00123::numeric(3,5)',
  'round(2.5)', 'round(-2.5)', 'round(2.345, 2)', 'round(2.345, -1)', 'round(1234.5, -2)', 'trunc(2.789, 1)', 'trunc(-2.789)',
  'ceil(2.1)', 'ceil(-2.1)', 'floor(-2.1)', 'floor(2.9)', 'sign(-3.2)', 'sign(0.0)', 'abs(-1.50)',
  'sqrt(2::numeric)', 'sqrt(16::numeric)', 'sqrt(0.0004::numeric)', 'sqrt(1000000::numeric)', 'sqrt(-1::numeric)',
  'scale(1.500)', 'trim_scale(1.500)', 'min_scale(1.500)', '1.5::numeric::float8', '0.1::numeric::float4',
  '0.1::float8::numeric', '1.0000000000000002::float8::numeric', '1e20::float8::numeric', "'NaN'::float8::numeric",
  '1.23456789::float4::numeric', '12345678.9::float8::numeric', '2::numeric ^ 10', '2.5::numeric ^ 3', '2::numeric ^ -2',
  '0.5::numeric ^ 100', '1.1::numeric ^ 0.5', 'power(2::numeric, 0.5)', 'exp(1::numeric)', 'ln(2::numeric)', 'ln(10::numeric)',
  'log(100::numeric)', 'log(2::numeric, 8::numeric)', 'ln(0::numeric)', 'ln(-1::numeric)', 'exp(0.5::numeric)', 'exp(-3::numeric)',
  'ln(1.0001::numeric)', 'ln(12345.678::numeric)', 'log10(1000::numeric)', 'log(0.001::numeric)',
];

export const FLOAT = [
  '0.1::float8 + 0.2::float8', '1e20::float8', '1e15::float8', '1e14::float8', '123456789012345678::float8', '0.0001::float8',
  '0.00001::float8', '1.5e-10::float8', '-0::float8', "'-0'::float8", '0.1::float4', '1e6::float4', '123456::float4', '1234567::float4',
  "'1e40'::float4", "'1e400'::float8", "'1e-400'::float8", "'NaN'::float8", "'-Infinity'::float8", "'inf'::float8", "'  1.5  '::float8",
  '1::float8 / 0', "'NaN'::float8 / 0", '1e308::float8 * 10', "'Infinity'::float8 * 0", '2::float8 ^ 0.5', '(-8)::float8 ^ (1.0/3)',
  '0::float8 ^ (-1)', "'NaN'::float8 ^ 0", '1::float8 ^ \'NaN\'::float8', '(-1)::float8 ^ \'Infinity\'::float8',
  'round(2.5::float8)', 'round(3.5::float8)', 'round(-2.5::float8)', 'trunc(-2.7::float8)', 'ceil(2.1::float8)', 'sign(-2::float8)',
  'sqrt(2::float8)', 'cbrt(27::float8)', 'exp(1::float8)', 'ln(2::float8)', 'log(100::float8)', 'log10(0::float8)', 'pi()',
  '1::float4 + 1', '1::float4 + 1.5', '16777217 = 16777216::float4', '0.1::float4 = 0.1::float8', "'NaN'::float8 = 'NaN'::float8",
  "'NaN'::float8 > 'Infinity'::float8", '-0::float8 = 0::float8', '3.0::float4 / 2', '1e38::float4 * 10::float4',
  'degrees(pi())', 'sin(0::float8)', 'atan2(1, 1)', '1.5::float8::int8', "'1e19'::float8::int8",
];

export const TEXT_BOOL = [
  "'abc' || 'def'", "'abc' || 1", "1 || 'abc'", "'x' || true", "'x' || NULL", "'a' || 1.50", "'ab'::char(4) || 'c'",
  "'ab '::varchar(5) || '|'", "'abcdef'::varchar(3)", "'abc  '::varchar(3)", "'ab'::char(4)", "'abcdef'::char(2)",
  "length('héllo')", "length('ab '::char(5))", "octet_length('héllo')", "lower('ÀBC')", "upper('straße')",
  "initcap('hello wORLD-foo bar_baz 3rd')", "substr('hello', 2, 3)", "substr('hello', 0, 3)", "substr('hello', -1, 3)",
  "substring('hello', 3)", "substr('hello', 2, -1)", "strpos('hello', 'll')", "position('x' in 'abc')", "left('hello', 2)",
  "left('hello', -2)", "right('hello', 2)", "right('hello', -2)", "lpad('hi', 5)", "lpad('hi', 5, 'xy')", "lpad('hello', 2)",
  "rpad('hi', 5, 'xy')", "ltrim('  hi  ')", "rtrim('xxhixx', 'x')", "btrim('xyhiyx', 'xy')", "replace('abcabc', 'b', 'X')",
  "reverse('héllo')", "repeat('ab', 3)", "repeat('ab', -1)", "split_part('a,b,c', ',', 2)", "split_part('a,b,c', ',', -1)",
  "split_part('a,b,c', ',', 5)", "concat('a', 1, NULL, true, 2.50)", "concat_ws('-', 'a', NULL, 'b', 3)", "concat_ws(NULL, 'a')",
  "format('%s and %s', 'a', 'b')", "format('%I %L %L', 'Foo bar', 'it''s', NULL)", "format('%2$s %1$s', 'a', 'b')",
  "format('[%5s][%-5s]', 'ab', 'cd')", "md5('abc')", "starts_with('hello', 'he')", "chr(65)", "chr(233)", "ascii('é')",
  "translate('hello', 'el', 'ip')", "quote_ident('Foo')", "quote_literal('it''s')", "to_hex(255)", "to_hex(-1)",
  "'abc' LIKE 'a%'", "'abc' LIKE 'A%'", "'abc' ILIKE 'A%'", "'a_c' LIKE 'a\\_c'", "'abc' LIKE 'a\\_c'", "'a%c' LIKE 'a\\%c'",
  "'abc' NOT LIKE '%b%'", "'ab' LIKE 'a'", "'a.c' LIKE 'a.c'", "'axc' LIKE 'a.c'", "'abc' LIKE 'abc\\'", "'AbC' NOT ILIKE 'abc'",
  "'x' LIKE like_escape('x#%', '#')", "'x%' LIKE like_escape('x#%', '#')", "'multi\nline' LIKE 'multi%line'",
  "'abc' ~ 'b'", "'abc' ~ '^B'", "'abc' ~* '^B'", "'abc' !~ 'z'", "'abc' !~* 'A'", "'foo123' ~ '[[:digit:]]+'",
  "regexp_replace('Thomas', '.[mN]a.', 'M')", "regexp_replace('foobarbaz', 'b..', 'X', 'g')", "regexp_replace('abc', '(b)', '[\\1]')",
  "regexp_match('foobarbequebaz', '(bar)(beque)')", "regexp_match('abc', 'z')", "substring('Thomas' from '...$')",
  "'abc' = 'abc'", "'abc' < 'abd'", "'a' < 'B'", "'ab'::char(3) = 'ab'", "'ab'::char(3) = 'ab '::text", "'é' > 'z'",
  "true AND NULL", "false AND NULL", "true OR NULL", "NOT NULL::bool", "true > false", "'t'::bool = true", "true::text",
  "string_to_array('a,b,c', ',')", "array_to_string(ARRAY[1, NULL, 3], ',', '*')", "array_to_string(ARRAY['a','b'], '-')",
];

/**
 * What the grammar does before typing: a minus folds into a numeric constant, through parentheses
 * (gram.y doNegate); prefix operators bind like other operators; EXTRACT takes any field, quoted or
 * not; NUMERIC scales may be negative; a bad modifier is reported as such.
 */
export const GRAMMAR = [
  '-9223372036854775808', '-(-9223372036854775808)', '- -2147483648', '-(2147483648)', '-(-(5))', '-(-2147483648)::int8',
  "-'5'", '-(5)::int2', '-1.5 * 2', '-(-1.5)', '-(1e3)',
  '@ -5 + 1', '~5 + 1', '~ 5 ^ 2', '- @ 5', '@ @ -5', '2 ^ @ -5', '|/ 16 + 9', '||/ 27', '|/ -4', '1 - @ -5', '@ -5 = 5',
  '@ -2147483648', "@ '-3.5'::float8", "@ -5 || 'x'",
  '1234.5::numeric(3,-2)', 'cast(1234 as numeric(2,-2))', '1234::decimal(4,-2)', '123456::numeric(3,-3)', '5::numeric(1,-1)',
  '1234::numeric(2,-1001)', '1::numeric(1001,0)', "'a'::varchar(0)", '1::float(60)',
  "extract('julian' from '2024-01-01'::date)", "extract('Julian' from '2024-01-01'::date)", "extract(JULIAN from '2024-01-01 12:00'::timestamp)",
  "extract(julian from '2024-01-01 06:00+00'::timestamptz)", "extract(foo from '2024-01-01'::date)", "extract(julian from '1 day'::interval)",
  "extract(julian from 'infinity'::date)", "extract(julian from '4714-11-24 BC'::date)",
];

export const INTS = ['1', '2', 'NULL', '4'];
export const AGGREGATES: AggCase[] = [
  ...['count', 'sum', 'avg', 'min', 'max', 'stddev', 'stddev_pop', 'variance', 'var_pop', 'bit_and', 'bit_or'].map((agg) => ({ agg, values: INTS })),
  { agg: 'sum', values: ['2147483647', '1'] }, { agg: 'sum', values: ['9223372036854775807::int8', '1::int8'] },
  { agg: 'avg', values: ['2', '3'] }, { agg: 'avg', values: ['1::int8', '2::int8', '2::int8'] }, { agg: 'avg', values: ['1.5', '2.25', '3'] },
  { agg: 'avg', values: ['1::float8', '2::float8'] }, { agg: 'sum', values: ['1.5::float4', '2.25::float4'] }, { agg: 'avg', values: ['NULL::int4'] },
  { agg: 'sum', values: ['1.10', '2.205', '-3'] }, { agg: 'sum', values: ['1.5', "'NaN'::numeric", '2'] },
  { agg: 'sum', values: ["'Infinity'::numeric", '1'] }, { agg: 'avg', values: ["'Infinity'::numeric", "'-Infinity'::numeric"] },
  { agg: 'avg', values: ["'Infinity'::numeric", '1.5'] }, { agg: 'sum', values: ['12345678901234567890123456789.5', '0.25'] }, { agg: 'sum', values: ['NULL::numeric'] }, { agg: 'count', values: ['NULL::int4', 'NULL::int4'] },
  { agg: 'avg', values: ["'1 day'::interval", "'2 days 1 hour'::interval"] }, { agg: 'sum', values: ["'1 mon'::interval", "'40 days'::interval"] },
  { agg: 'stddev', values: ['1.5', '2.5', '2.5', '4'] }, { agg: 'var_samp', values: ['1', '1'] }, { agg: 'var_samp', values: ['7'] },
  { agg: 'stddev_pop', values: ['7'] }, { agg: 'stddev', values: ['1.5::float8', '2.5::float8', '10::float8'] }, { agg: 'variance', values: ['2::float4', '4::float4'] },
  { agg: 'min', values: ["'b'::text", "'a'::text", "'é'::text"] }, { agg: 'max', values: ["'2024-01-01'::date", "'2023-01-01'::date"] },
  { agg: 'max', values: ["'NaN'::float8", '1::float8'] }, { agg: 'min', values: ['1.50', '1.5', '0.999'] }, { agg: 'max', values: ['ARRAY[1,2]', 'ARRAY[1,3]'] },
  { agg: 'max', values: [`'{"a":1}'::jsonb`, `'[1,2]'::jsonb`] }, { agg: 'max', values: ['true', 'false'] }, { agg: 'max', values: ["'ab'::varchar(5)", "'b'::varchar(5)"] }, { agg: 'min', values: ["'1 mon'::interval", "'29 days'::interval"] },
  { agg: 'string_agg', values: ["'a'::text", 'NULL::text', "'c'::text"], extra: "','" }, { agg: 'string_agg', values: ['NULL::text'], extra: "','" },
  { agg: 'array_agg', values: ['1', 'NULL', '3'] }, { agg: 'array_agg', values: ["'x'::text", "'y z'::text"] },
  { agg: 'bool_and', values: ['true', 'NULL::bool', 'false'] }, { agg: 'bool_or', values: ['false', 'NULL::bool'] }, { agg: 'every', values: ['true', 'true'] },
  { agg: 'jsonb_agg', values: ['1', 'NULL', '3'] }, { agg: 'jsonb_agg', values: ["'a'::text", "'b'::text"] },
  { agg: 'count', values: ['1', '1', '2', 'NULL'], distinct: true }, { agg: 'sum', values: ['1.0', '1.00', '2'], distinct: true },
  { agg: 'avg', values: ['1', '1', '2'], distinct: true }, { agg: 'string_agg', values: ["'a'::text", "'a'::text", "'b'::text"], extra: "'-'", distinct: true },
];

