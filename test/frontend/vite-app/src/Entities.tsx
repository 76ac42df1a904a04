import { useEffect, useState, type FormEvent } from 'react';
import { PalanqueApiError, unwrap, type PalanqueClient, type components } from '@palanque/sdk';

type EntitySummary = components['schemas']['EntitySummary'];

/** The campaign's entities, and a form that adds a candidate: what a front end builds first. */
export function Entities({ api }: { api: PalanqueClient }) {
  const [entities, setEntities] = useState<EntitySummary[]>([]);
  const [name, setName] = useState('');
  const [problem, setProblem] = useState('');

  async function refresh() {
    setEntities(unwrap(await api.GET('/api/entidade/')).results);
  }

  useEffect(() => {
    refresh().catch((error: unknown) => setProblem(String(error)));
  }, []);

  async function add(event: FormEvent) {
    event.preventDefault();
    setProblem('');
    try {
      await api.POST('/api/entidade/add/', { body: { nome: name } });
      setName('');
      await refresh();
    } catch (error) {
      setProblem(error instanceof PalanqueApiError ? `${error.code}: ${error.message}` : String(error));
    }
  }

  return (
    <section>
      <h1>Entidades</h1>
      <ul>
        {entities.map((entity) => (
          <li key={entity.id}>{entity.nome}</li>
        ))}
      </ul>
      <form onSubmit={add}>
        <label>
          Nome <input value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <button type="submit">Adicionar</button>
      </form>
      {problem && <p role="alert">{problem}</p>}
    </section>
  );
}
