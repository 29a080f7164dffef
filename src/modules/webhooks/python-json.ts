/**
 * JSON text exactly as Python's `json.dumps(value)` writes it with its defaults (separators `", "` and
 * `": "`, `ensure_ascii=True`, float `repr`). The original sends webhook bodies this way, so a receiver
 * that re-serializes the parsed body with `json.dumps` before checking the signature keeps working.
 * Values that plain JSON cannot carry become what JSON.stringify makes of them (null / dropped).
 */
export function pythonJsonDumps(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return write((value as { toJSON(): unknown }).toJSON());
  }
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return number(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object':
      if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(', ')}]`;
      return `{${Object.entries(value as Record<string, unknown>)
        .map(([key, item]) => {
          const text = write(item);
          return text === undefined ? undefined : `${quote(key)}: ${text}`;
        })
        .filter((part) => part !== undefined)
        .join(', ')}}`;
    default:
      return undefined; // undefined, functions, symbols: dropped like JSON.stringify does
  }
}

const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

function quote(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const code = text.charCodeAt(i);
    if (SHORT_ESCAPES[ch] !== undefined) out += SHORT_ESCAPES[ch];
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + '"';
}

/** Python's int or float `repr`: exponent form below 1e-4 and from 1e16 on, `.0` on whole floats. */
function number(value: number): string {
  if (!Number.isFinite(value)) return 'null';
  if (Number.isSafeInteger(value)) return String(value);
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = negative ? '-' : '';
  if (exponent < -4 || exponent >= 16) {
    const rest = digits.slice(1);
    const exp = `${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
    return `${sign}${digits[0]}${rest ? '.' + rest : ''}e${exp}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1);
  return `${sign}${whole}.${fraction || '0'}`;
}
