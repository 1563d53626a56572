CREATE VECTOR INDEX $index IF NOT EXISTS
FOR ()-[r:REL]-() ON r.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
