import { useEffect, useState } from 'react';

/** Hash routes (`#/base/1/Name`), so the server only ever serves `/` and the API keeps every other path. */
export function useRoute(): string[] {
  const [hash, setHash] = useState(window.location.hash);
  useEffect(() => {
    const onChange = () => setHash(window.location.hash);
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part));
}

export function href(...parts: Array<string | number>): string {
  return `#/${parts.map((p) => encodeURIComponent(String(p))).join('/')}`;
}
