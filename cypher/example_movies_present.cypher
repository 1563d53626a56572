// Whether the database already holds a node of the Movies graph's labels (`db example movies`
// creates it only once).
RETURN EXISTS { MATCH (n) WHERE n:Movie OR n:Person } AS present
