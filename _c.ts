import "zod";
