package bohemia

import (
	"reflect"
	"testing"
)

func TestParseDayZTags(t *testing.T) {
	t.Parallel()
	// The shape DayZ servers send, with every known tag.
	got := ParseDayZTags("battleye,no3rd,external,privHive,shard123,lqs5,etm4.000000,entm8.500000,mod,isDLC,12:34,weird")
	want := DayZTags{BattlEye: true, FirstPerson: true, External: true, PrivateHive: true, Mods: true, DLC: true,
		Shard: "123", Queue: 5, DayAcceleration: 4, NightAcceleration: 8.5, Time: "12:34", Other: []string{"weird"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseDayZTags =\n%+v\nwant\n%+v", got, want)
	}
	if got.Official() {
		t.Error("a community private-hive server reported official")
	}
	official := ParseDayZTags("battleye,shard007,lqs0,etm1.000000,entm1.000000,06:05")
	if !official.Official() || official.Queue != 0 || official.Time != "06:05" || official.FirstPerson {
		t.Errorf("official server: %+v", official)
	}
	if none := ParseDayZTags(""); none.Queue != -1 || none.Other != nil {
		t.Errorf("no keywords: %+v", none)
	}
	bad := ParseDayZTags("lqsX,etm?,25:00")
	if bad.Queue != -1 || !reflect.DeepEqual(bad.Other, []string{"lqsX", "etm?", "25:00"}) {
		t.Errorf("unparsable values: %+v", bad)
	}
}

func TestParseArma3Tags(t *testing.T) {
	t.Parallel()
	// Keywords as an Arma 3 server sends them.
	got := ParseArma3Tags("bt,r182,n0,s7,i3,mf,lf,vt,dt,trpg,g65545,h5A1B2C3D,f0,c-2147483648--2147483648,pw,e15,j0,k0,")
	want := Arma3Tags{BattlEye: true, RequiredVersion: 182, State: 7, Difficulty: 3, VerifySignatures: true,
		Dedicated: true, GameType: "rpg", Language: 65545, ContentHash: "5A1B2C3D", Coordinates: "-2147483648--2147483648",
		Platform: "w", TimeLeft: 15}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseArma3Tags =\n%+v\nwant\n%+v", got, want)
	}
	if Arma3State[got.State] != "playing" {
		t.Errorf("state %d is %q", got.State, Arma3State[got.State])
	}
	odd := ParseArma3Tags("bx,r1.82,zzz,yAltis,oDE")
	if odd.Island != "Altis" || odd.Country != "DE" || !reflect.DeepEqual(odd.Other, []string{"bx", "r1.82", "zzz"}) {
		t.Errorf("odd tags: %+v", odd)
	}
}
