/**
 * Implicit inner joins (`FROM T1, T2 WHERE T1.a = T2.b`): results keyed `<table>.<column>` with
 * `is_join_stmt: true`, conditions compiled like any WHERE, the original's restrictions refused with 400.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('SQL implicit joins (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Orders', [
      { column_name: 'Order', column_type: 'text' },
      { column_name: 'Customer', column_type: 'text' },
      { column_name: 'Amount', column_type: 'number' },
    ]);
    await addTable(g, 'Customers', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'City', column_type: 'text' },
      { column_name: 'Amount', column_type: 'number' },
    ]);
    await addTable(g, 'Cities', [
      { column_name: 'City', column_type: 'text' },
      { column_name: 'Country', column_type: 'text' },
    ]);
    await appendRows(g, 'Customers', [
      { Name: 'ann', City: 'Berlin', Amount: 1 },
      { Name: 'bob', City: 'Paris', Amount: 2 },
      { Name: 'cid', City: 'Rome' },
    ]);
    await appendRows(g, 'Orders', [
      { Order: 'o1', Customer: 'ann', Amount: 10 },
      { Order: 'o2', Customer: 'bob', Amount: 25 },
      { Order: 'o3', Customer: 'ann', Amount: 7 },
      { Order: 'o4', Customer: 'zed', Amount: 99 },
      { Order: 'o5', Amount: 1 },
    ]);
    await appendRows(g, 'Cities', [
      { City: 'Berlin', Country: 'DE' },
      { City: 'Paris', Country: 'FR' },
    ]);
  });
  afterAll(() => t.close());

  const query = (text: string, convert = true, parameters: unknown[] = []) => g.call('POST', 'sql/', { sql: text, convert_keys: convert, parameters });

  it('joins two tables on an equality, keyed <table>.<column>, with is_join_stmt and per-table metadata', async () => {
    const res = await query('SELECT Orders.Order, Customers.City, Orders.Amount FROM Orders, Customers WHERE Orders.Customer = Customers.Name ORDER BY Orders.Order');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.is_join_stmt).toBe(true);
    expect(body.results).toEqual([
      { 'Orders.Order': 'o1', 'Customers.City': 'Berlin', 'Orders.Amount': 10 },
      { 'Orders.Order': 'o2', 'Customers.City': 'Paris', 'Orders.Amount': 25 },
      { 'Orders.Order': 'o3', 'Customers.City': 'Berlin', 'Orders.Amount': 7 },
    ]);
    expect(body.metadata.map((m: Record<string, unknown>) => [m.key, m.name, m.table_name, m.type])).toEqual([
      ['Orders.Order', 'Order', 'Orders', 'text'],
      ['Customers.City', 'City', 'Customers', 'text'],
      ['Orders.Amount', 'Amount', 'Orders', 'number'],
    ]);
  });

  it('keys by table id and column key without convert_keys', async () => {
    const tables = (await g.call('GET', 'metadata/')).json().metadata.tables as Array<{ _id: string; name: string; columns: Array<{ key: string; name: string }> }>;
    const orders = tables.find((x) => x.name === 'Orders')!;
    const key = `${orders._id}.${orders.columns.find((c) => c.name === 'Order')!.key}`;
    const res = await query('SELECT Orders.Order FROM Orders, Customers WHERE Orders.Customer = Customers.Name ORDER BY 1 LIMIT 1', false);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results).toEqual([{ [key]: 'o1' }]);
    expect(res.json().metadata[0]).toMatchObject({ key, id: key, name: 'Order', table_id: orders._id, table_name: 'Orders' });
  });

  it('filters with other conditions, functions, ILIKE and parameters; orders and limits; aliases name tables and keys', async () => {
    const res = await query(
      "SELECT o.Order AS id, c.Name, Country FROM Orders o, Customers c, Cities WHERE o.Customer = c.Name AND c.City = Cities.City AND abs(o.Amount - 10) < ? AND Country ILIKE 'de' ORDER BY o.Amount DESC",
      true,
      [5],
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results).toEqual([
      { id: 'o1', 'Customers.Name': 'ann', 'Cities.Country': 'DE' },
      { id: 'o3', 'Customers.Name': 'ann', 'Cities.Country': 'DE' },
    ]);
    // Unqualified names that only one table has need no qualifier, in conditions too.
    const plain = await query('SELECT `Order`, City FROM Orders, Customers WHERE Customer = Name AND City = ? ORDER BY `Order`', true, ['Berlin']);
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.json().results).toEqual([
      { 'Orders.Order': 'o1', 'Customers.City': 'Berlin' },
      { 'Orders.Order': 'o3', 'Customers.City': 'Berlin' },
    ]);
    const limited = await query('SELECT Orders.Order FROM Orders, Customers WHERE Orders.Customer = Customers.Name ORDER BY Orders.Amount LIMIT 1 OFFSET 1');
    expect(limited.json().results).toEqual([{ 'Orders.Order': 'o1' }]);
  });

  it('selects * and T.* as every column of the tables', async () => {
    const res = await query("SELECT * FROM Customers, Cities WHERE Customers.City = Cities.City AND Customers.Name = 'bob'");
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results).toEqual([{ 'Customers.Name': 'bob', 'Customers.City': 'Paris', 'Customers.Amount': 2, 'Cities.City': 'Paris', 'Cities.Country': 'FR' }]);
    const one = await query('SELECT Cities.* FROM Customers, Cities WHERE Customers.City = Cities.City ORDER BY Cities.City');
    expect(one.json().results).toEqual([
      { 'Cities.City': 'Berlin', 'Cities.Country': 'DE' },
      { 'Cities.City': 'Paris', 'Cities.Country': 'FR' },
    ]);
  });

  it.each<[string, RegExp]>([
    ['SELECT Amount FROM Orders, Customers WHERE Orders.Customer = Customers.Name', /Column 'Amount' is ambiguous: Orders, Customers have it; write Table.Amount/],
    ['SELECT Orders.Order FROM Orders, Customers WHERE Customer = Name AND Nope = 1', /Column 'Nope' not found in the joined tables/],
    ['SELECT Orders.Order FROM Orders, Nope WHERE Orders.Customer = Nope.Name', /Table 'Nope' not found/],
    ['SELECT Orders.Order FROM Orders, Customers WHERE Orders.Customer = Other.Name', /Unknown table 'Other'/],
    ['SELECT Orders.Order FROM Orders, Customers', /A join needs its conditions in WHERE/],
    ["SELECT Orders.Order FROM Orders, Customers WHERE Orders.Amount > 1", /Table 'Customers' has no join condition/],
    ['SELECT Orders.Order FROM Orders, Customers WHERE Orders.Customer = Customers.Name OR Orders.Amount = Customers.Amount', /Table 'Customers' has no join condition/],
    ['SELECT Orders.Order FROM Orders, Customers, Cities WHERE Orders.Customer = Customers.Name', /Table 'Cities' has no join condition/],
    ['SELECT Orders.Order FROM Orders, Orders WHERE Orders.Customer = Orders.Order', /appears twice in FROM/],
    ['SELECT Orders.Order FROM Orders JOIN Customers ON Orders.Customer = Customers.Name', /JOIN keyword is not supported/],
    ['SELECT COUNT(*) FROM Orders, Customers WHERE Orders.Customer = Customers.Name', /select columns only/],
    ['SELECT Orders.Customer FROM Orders, Customers WHERE Orders.Customer = Customers.Name GROUP BY Orders.Customer', /GROUP BY is not supported in a join/],
    ['SELECT Orders.Order FROM Orders, Customers WHERE Orders.Customer = Customers.Name ORDER BY abs(Orders.Amount)', /ORDER BY in a join must name a column/],
  ])('refuses %s', async (text, message) => {
    const res = await query(text);
    expect(res.statusCode, res.body).toBe(400);
    expect(JSON.stringify(res.json())).toMatch(message);
  });

  it('reads only the tables of the token\'s base', async () => {
    const other = await gateway(t);
    await addTable(other, 'Customers', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(other, 'Customers', [{ Name: 'ann' }]);
    // The same table name in another base is never joined.
    const res = await other.call('POST', 'sql/', { sql: 'SELECT Customers.Name FROM Customers, Orders WHERE Customers.Name = Orders.Customer', convert_keys: true });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toMatch(/Table 'Orders' not found/);
  });
});
