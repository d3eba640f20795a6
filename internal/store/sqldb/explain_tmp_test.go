package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
)

func TestExplainTmp(t *testing.T) {
	db, err := sql.Open(os.Getenv("EXPLAIN_DRIVER"), os.Getenv("EXPLAIN_DSN"))
	if err != nil {
		t.Fatal(err)
	}
	pg := os.Getenv("EXPLAIN_DRIVER") == "pgx"
	for _, c := range [][2]string{
		{`gameSessionProperties.map = 'map-0042' AND hasAvailablePlayerSessions = true`, "creationTimeMillis DESC"},
		{`gameSessionProperties.mode = 'ffa' AND hasAvailablePlayerSessions = true`, "playerSessionCount DESC"},
		{"", "gameSessionProperties.map ASC"},
		{"hasAvailablePlayerSessions = true", ""},
	} {
		q := store.SearchQuery{FleetID: "fleet-bench"}
		if c[0] != "" {
			q.Filter, _ = search.ParseFilter(c[0])
		}
		s, _ := search.ParseSort(c[1])
		if c[1] != "" {
			q.Sort = &s
		}
		b := &sqlBuilder{pg: pg}
		pl := plan{q: q, limit: 21}
		if strings.Contains(c[0], "0042") {
			pl.driver = conjuncts(q.Filter, nil)[0]
		}
		if strings.Contains(c[1], "Properties") {
			pl.part = partValues
		}
		b.search(pl)
		prefix := "EXPLAIN QUERY PLAN "
		if pg {
			prefix = "EXPLAIN ANALYZE "
		}
		rows, err := db.QueryContext(context.Background(), prefix+b.sql.String(), b.args...)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		fmt.Println("==", c, "\n", b.sql.String())
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			var parts []string
			for _, v := range vals {
				parts = append(parts, fmt.Sprint(v))
			}
			fmt.Println(strings.Join(parts, " | "))
		}
		rows.Close()
	}
}
