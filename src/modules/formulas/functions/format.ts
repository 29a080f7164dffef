import { partsIn } from '../calendar.js';
import { FormulaValueError } from '../values.js';

/** `text(number, format)`: the number column formats of the original. */
export function formatNumber(n: number, format: string): string {
  const money = (symbol: string) => {
    const [whole, frac] = Math.abs(n).toFixed(2).split('.');
    const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return `${n < 0 ? '-' : ''}${symbol}${grouped}.${frac}`;
  };
  switch (format.toLowerCase()) {
    case 'number':
      return String(Number(n.toPrecision(15)));
    case 'percent':
      return `${Number((n * 100).toPrecision(15))}%`;
    case 'dollar':
      return money('$');
    case 'euro':
      return money('€');
    case 'yuan':
      return money('¥');
    default:
      throw new FormulaValueError(`unknown number format '${format}'`);
  }
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `text(date, format)`: tokens YYYY, YY, MM, M, DD, D, HH, mm, ss (as the date column formats). */
export function formatDate(ms: number, format: string, timeZone: string): string {
  const p = partsIn(ms, timeZone);
  return format.replace(/YYYY|YY|MM|M|DD|D|HH|mm|ss/g, (token) => {
    switch (token) {
      case 'YYYY':
        return pad(p.year, 4);
      case 'YY':
        return pad(p.year % 100);
      case 'MM':
        return pad(p.month);
      case 'M':
        return String(p.month);
      case 'DD':
        return pad(p.day);
      case 'D':
        return String(p.day);
      case 'HH':
        return pad(p.hour);
      case 'mm':
        return pad(p.minute);
      default:
        return pad(p.second);
    }
  });
}
